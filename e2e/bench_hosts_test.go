package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// TestBenchSeveralHosts measures a viewer of several hosts against one
// viewer per host, run only with SUBDASH_BENCH=1: two hosts here and one over ssh (the test
// sshd on 127.0.0.1), each with two agents printing a line every 50 ms;
// one viewer of the three (attach --dir --dir ssh://…) and one viewer per
// host run at once, each in tmux at 160x45 following its first agent. In
// each of three windows of SUBDASH_FLOOD_SECONDS (default 20 s) the CPU
// of the viewer of three (with its ssh) and of the three viewers (with
// the ssh of the one over ssh) is counted over the same seconds; the
// ratio is theirs, the median of the three windows.
//
//	SUBDASH_BENCH=1 SUBDASH_FLOOD_SECONDS=8 go test -run 'TestBenchSeveralHosts$' -count=1 -v ./e2e/
func TestBenchSeveralHosts(t *testing.T) {
	secs := benchSeconds(t)
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{})
	one, two, far := newWorkspace(t), newWorkspace(t), newWorkspace(t)
	var first []string
	for i, w := range []workspace{one, two, far} {
		_, sock := serveDefault(t, w)
		for k := 0; k < 2; k++ {
			msg := fmt.Sprintf("stream h%d a%d", i, k)
			spawnOn(t, sock, fmt.Sprintf("a%d", k), msg)
			if k == 0 {
				first = append(first, msg)
			}
		}
	}
	target := "ssh://" + sshd.Host + far.dir
	env := append(sshEnv(t, sshd), "XDG_RUNTIME_DIR=")
	multi := startViewerIn(t, one, "", 160, 45, env, "attach", "--dir", one.dir, "--dir", two.dir, target)
	singles := []*dash{
		startViewerIn(t, one, "", 160, 45, env, "attach", "--dir", one.dir),
		startViewerIn(t, two, "", 160, 45, env, "attach", "--dir", two.dir),
		startViewerIn(t, far, "", 160, 45, env, "attach", target),
	}
	multi.waitFor("every host ticking", func(s string) bool {
		return tickOf(s, first[0]) > 0 && tickOf(s, first[1]) > 0 && tickOf(s, first[2]) > 0
	})
	for i, d := range singles {
		d.waitFor("its host ticking", func(s string) bool { return tickOf(s, first[i]) > 0 })
	}
	mpids := []int{multi.dashPID(), multi.sshOf()}
	spids := []int{singles[0].dashPID(), singles[1].dashPID(), singles[2].dashPID(), singles[2].sshOf()}
	sum := func(pids []int) int {
		n := 0
		for _, p := range pids {
			n += cpuTicks(p)
		}
		return n
	}
	var ratios []float64
	for round := 1; round <= 3; round++ {
		m0, s0, t0 := sum(mpids), sum(spids), time.Now()
		time.Sleep(secs) // the window measured: both sides run through the same seconds
		el := time.Since(t0).Seconds()
		m, s := float64(sum(mpids)-m0)/100/el, float64(sum(spids)-s0)/100/el
		ratios = append(ratios, m/s)
		t.Logf("window %d (%.1f s): viewer of 3 hosts %.3f core (its ssh included); 3 viewers %.3f core together (the ssh one's ssh included); ratio %.2f",
			round, el, m, s, m/s)
	}
	t.Logf("median ratio of 3 windows: %.2f", median(ratios))
	for _, d := range append(singles, multi) {
		d.keys("q")
		d.waitExit()
	}
}

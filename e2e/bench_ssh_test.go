package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// rchar is what process pid read so far (/proc/PID/io), in bytes.
func rchar(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestBenchSSHViewer is the ssh viewer's figures of BENCHMARKS.md, run
// only with SUBDASH_BENCH=1: `subdash serve` with four agents flooding
// (`yes`), a viewer on its socket and a viewer over ssh
// (ssh://there/DIR through the test sshd on 127.0.0.1), each in tmux at
// 160x45. For SUBDASH_FLOOD_SECONDS (20 s) j/k is pressed on each in
// turn and timed until the selection, then the other agent's log, shows
// (keyAnswer); meanwhile the bytes each viewer read (rchar) and the CPU
// of the ssh link are counted. Ratios are ssh over local in the same run.
//
//	SUBDASH_BENCH=1 go test -run 'TestBenchSSHViewer$' -count=1 -v ./e2e/
func TestBenchSSHViewer(t *testing.T) {
	secs := benchSeconds(t)
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{})
	w := newWorkspace(t)
	w.socket = serveThere(t, w, floodCommand, 4)
	ids := spawnFloods(t, w)
	local := startSSHViewer(t, w, nil, "--socket", w.socket)
	target := "ssh://" + sshd.Host + w.dir
	remote := startSSHViewer(t, w, sshEnv(t, sshd), target)
	local.waitText("spam " + ids[0])
	remote.waitText("spam "+ids[0], target)
	lpid, rpid, spid := local.dashPID(), remote.dashPID(), remote.sshOf()
	if spid == 0 {
		t.Fatal("no ssh under the ssh viewer")
	}
	var lat [2][2][]time.Duration // [local, ssh][selection, log]
	r0 := [3]int64{rchar(lpid), rchar(rpid), rchar(spid)}
	c0 := [3]int{cpuTicks(lpid), cpuTicks(rpid), cpuTicks(spid)}
	t0 := time.Now()
	for i := 0; time.Since(t0) < secs; i++ {
		for j, d := range []*dash{local, remote} {
			sel, log := keyAnswer(t, d, i, ids[(i+1)%4])
			lat[j][0] = append(lat[j][0], sel)
			lat[j][1] = append(lat[j][1], log)
		}
	}
	el := time.Since(t0).Seconds()
	for k, what := range []string{"selection shown", "the other agent's log shown"} {
		lm, lp, lx := stats(lat[0][k])
		rm, rp, rx := stats(lat[1][k])
		t.Logf("%s (%d keys each): local viewer median %v p95 %v max %v; ssh viewer median %v p95 %v max %v; ssh/local median %.2f, p95 %.2f, max %.2f",
			what, len(lat[0][k]), lm.Round(100*time.Microsecond), lp.Round(100*time.Microsecond), lx.Round(100*time.Microsecond),
			rm.Round(100*time.Microsecond), rp.Round(100*time.Microsecond), rx.Round(100*time.Microsecond),
			float64(rm)/float64(lm), float64(rp)/float64(lp), float64(rx)/float64(lx))
	}
	lb, rb, sb := float64(rchar(lpid)-r0[0])/el, float64(rchar(rpid)-r0[1])/el, float64(rchar(spid)-r0[2])/el
	t.Logf("read per second over %.1f s: local viewer %.0f B/s, ssh viewer %.0f B/s (%.2f× local), its ssh %.0f B/s; CPU: local viewer %.3f core, ssh viewer %.3f core, its ssh %.3f core",
		el, lb, rb, rb/lb, sb, float64(cpuTicks(lpid)-c0[0])/100/el, float64(cpuTicks(rpid)-c0[1])/100/el, float64(cpuTicks(spid)-c0[2])/100/el)
	for _, d := range []*dash{local, remote} {
		d.keys("q")
		d.waitExit()
	}
}

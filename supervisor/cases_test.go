package supervisor

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// The rows H04–H16 of ../shared/cases/README.md, run as the agent command
// with the message "task".

func runCase(t *testing.T, command string) (*Supervisor, string, proto.WaitDetail) {
	t.Helper()
	s := newTestSupervisor(t, command)
	id := spawn(t, s, "task")
	return s, id, waitFinal(t, s, id)
}

func assertLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("display lines:\n got %q\nwant %q", got, want)
	}
}

func TestH04CarriageReturnProgress(t *testing.T) {
	s, id, d := runCase(t, `for i in 1 2 3 4 5; do printf '\rprogress %d%%' $((i*20)); sleep 0.02; done; printf '\n'; printf 'abcdef\rXY\n'; printf 'crlf line\r\n'`)
	if d.Status != proto.StatusCompleted {
		t.Fatalf("status %s", d.Status)
	}
	assertLines(t, lines(t, s, id), "progress 100%", "XYcdef", "crlf line")
}

func TestH05VeryLongLine(t *testing.T) {
	s, id, d := runCase(t, `printf '%0200000d' 0; echo; echo after-long-line`)
	if d.Status != proto.StatusCompleted {
		t.Fatalf("status %s", d.Status)
	}
	w, _ := s.Window(t.Context(), id, 0, 0, 10)
	if len(w.Lines) != 2 || w.Lines[1].Text != "after-long-line" {
		t.Fatalf("lines = %d, last %q", len(w.Lines), w.Lines[len(w.Lines)-1].Text)
	}
	long := w.Lines[0]
	if !strings.HasPrefix(long.Text, "0000000000") || !strings.Contains(long.Text, "cut") || long.Width > 65536 {
		t.Fatalf("long line: width %d, tail %q", long.Width, long.Text[len(long.Text)-80:])
	}
	if fi, err := os.Stat(logPath(t, s, id)); err != nil || fi.Size() != 200000+1+16 {
		t.Fatalf("log file size = %v, %v; want every byte", fi.Size(), err)
	}
}

func TestH06InvalidUTF8AndControls(t *testing.T) {
	s, id, d := runCase(t, `printf 'caf\351 latte #col\n\377\376\001\002\200\300\257\a\b\013\014 bin\nvisible-after-binary\n'`)
	if d.Status != proto.StatusCompleted {
		t.Fatalf("status %s", d.Status)
	}
	assertLines(t, lines(t, s, id), "caf\uFFFD latte #col", strings.Repeat("\uFFFD", 5)+" bin", "visible-after-binary")
}

func TestH07Tabs(t *testing.T) {
	s, id, _ := runCase(t, `printf 'a\tb\n1234567\tc\n12345678\td\n\tindented\n'`)
	assertLines(t, lines(t, s, id), "a       b", "1234567 c", "12345678        d", "        indented")
}

func TestH08PartialLineVisibleWhileRunning(t *testing.T) {
	s := newTestSupervisor(t, `printf 'partial-line-no-newline'; sleep 3; printf ' ...finished'; exit 3`)
	id := spawn(t, s, "task")
	waitForLine(t, s, id, "partial-line-no-newline", 3*time.Second)
	if info, _ := s.Agent(id); !info.Running() {
		t.Fatal("the partial line was seen only after the child ended")
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || *d.LastError != "submission failed with exit code 3" {
		t.Fatalf("detail %+v", d)
	}
	assertLines(t, lines(t, s, id), "partial-line-no-newline ...finished")
}

func TestH09ChildIgnoresSIGTERM(t *testing.T) {
	s := newTestSupervisor(t, `trap '' TERM INT; echo ignoring-term; sleep 60`)
	id := spawn(t, s, "task")
	waitForLine(t, s, id, "ignoring-term", 5*time.Second)
	pg := groupOf(t, s, id)
	done := make(chan proto.StatusResult, 1)
	go func() {
		res, _ := s.Interrupt(t.Context(), id)
		done <- res
	}()
	waitFor(t, s, 5*time.Second, func() bool { info, _ := s.Agent(id); return info.Stopping })
	res := <-done
	if res.Status != proto.StatusErrored {
		t.Fatalf("interrupt = %+v", res)
	}
	assertGroupGone(t, pg)
	if d := waitFinal(t, s, id); *d.LastError != "interrupted" {
		t.Fatalf("last_error %q", *d.LastError)
	}
}

func TestH10LeaderExitsMemberIgnoresTERM(t *testing.T) {
	s := newTestSupervisor(t, `trap 'echo leader-exiting; exit 0' TERM; sh -c 'trap "" TERM; exec sleep 300' & wait`)
	id := spawn(t, s, "task")
	pg := groupOf(t, s, id)
	waitFor(t, s, 5*time.Second, func() bool { m, _ := local.GroupMembers(pg); return len(m) >= 2 })
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	assertGroupGone(t, pg)
	waitForLine(t, s, id, "leader-exiting", time.Second)
	if d := waitFinal(t, s, id); d.Status != proto.StatusErrored || *d.LastError != "interrupted" {
		t.Fatalf("detail %+v", d)
	}
}

func TestH11Grandchildren(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "sleep 300 & sleep 301 & echo started; wait")
	waitForLine(t, s, id, "started", 5*time.Second)
	pg := groupOf(t, s, id)
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	assertGroupGone(t, pg)
	if _, err := s.Send(t.Context(), id, "echo next", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || *d.LastOutput != "next" {
		t.Fatalf("detail %+v", d)
	}
}

func TestH12GrandchildHoldsPipe(t *testing.T) {
	start := time.Now()
	s, id, d := runCase(t, `sleep 30 & echo started`)
	if d.Status != proto.StatusCompleted || *d.LastOutput != "started" {
		t.Fatalf("detail %+v", d)
	}
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Fatalf("ended after %s: it waited for the grandchild", elapsed)
	}
	pg := groupOf(t, s, id)
	waitFor(t, s, 10*time.Second, func() bool { m, _ := local.GroupMembers(pg); return len(m) == 0 })
}

// A main process that exits by itself while a member of its group ignores
// SIGTERM: the submission ends at once with the exit status (SPEC §4), an
// interrupt then finds nothing running and cannot relabel it "interrupted",
// and the leftover is killed after the grace period.
func TestSelfExitWithLeftoverEndsAtOnce(t *testing.T) {
	s := newTestSupervisor(t, `sh -c 'trap "" TERM; exec sleep 30' & echo started`, func(c *Config) { c.Grace = time.Second })
	id := spawn(t, s, "task")
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || *d.LastOutput != "started" {
		t.Fatalf("detail %+v", d)
	}
	if _, err := s.Interrupt(t.Context(), id); proto.CodeOf(err) != proto.CodeNotRunning {
		t.Fatalf("interrupt after the main process ended: %v", err)
	}
	pg := groupOf(t, s, id)
	waitFor(t, s, 15*time.Second, func() bool {
		m, _ := local.GroupMembers(pg)
		return len(m) == 0 && strings.Contains(readJournal(t, s), `"event":"leftovers_terminated"`)
	})
	journal := readJournal(t, s)
	ended := strings.Index(journal, `"event":"submission_ended"`)
	reaped := strings.Index(journal, `"event":"leftovers_terminated"`)
	if ended < 0 || reaped < ended {
		t.Fatalf("the submission must end before its leftovers are terminated:\n%s", journal)
	}
	if info, _ := s.Agent(id); info.Submissions[0].Status != proto.StatusCompleted || info.LastError != nil {
		t.Fatalf("after the leftovers: %+v", info.Submissions[0])
	}
}

// readJournal returns the run's journal as it is now.
func readJournal(t *testing.T, s *Supervisor) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestH13ChildReadsStdinToEOF(t *testing.T) {
	_, _, d := runCase(t, `cat > /dev/null; echo got-eof`)
	if d.Status != proto.StatusCompleted || *d.LastOutput != "got-eof" {
		t.Fatalf("detail %+v", d)
	}
}

func TestH14MegabyteMessage(t *testing.T) {
	msg := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	s := newTestSupervisor(t, "cat")
	id := spawn(t, s, msg)
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Fatalf("detail %+v", d)
	}
	b, err := os.ReadFile(logPath(t, s, id))
	if err != nil || string(b) != msg+"\n" {
		t.Fatalf("log has %d bytes, want %d (err %v)", len(b), len(msg)+1, err)
	}

	s = newTestSupervisor(t, "true")
	id = spawn(t, s, msg)
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Fatalf("true with 1 MiB message: %+v", d)
	}
}

func TestH15StderrFlood(t *testing.T) {
	s, id, d := runCase(t, `printf '%0200000d' 0 >&2; echo stdout-done`)
	if d.Status != proto.StatusCompleted {
		t.Fatalf("status %s", d.Status)
	}
	waitForLine(t, s, id, "stdout-done", time.Second)
	// only the stderr part was cut: the marker opens it, not stdout's
	if !strings.HasPrefix(*d.LastOutput, "stdout-done\n\nstderr:\n...[truncated]000") {
		t.Fatalf("last_output = %.200q", *d.LastOutput)
	}
}

func TestH16FloodInUnwatchedAgent(t *testing.T) {
	s, id, d := runCase(t, `seq 2000000; echo flood-done`)
	if d.Status != proto.StatusCompleted || !strings.HasSuffix(*d.LastOutput, "1999999\n2000000\nflood-done") {
		t.Fatalf("detail %+v", d.Status)
	}
	got := lines(t, s, id)
	if len(got) != DefaultScrollback || got[len(got)-1] != "flood-done" || got[0] != "1990002" {
		t.Fatalf("scrollback: %d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	w, _ := s.Window(t.Context(), id, 0, 0, 0)
	if w.Total != 2000001 || w.First != 2000001-DefaultScrollback {
		t.Fatalf("window range = [%d, %d)", w.First, w.Total)
	}
}

func TestLogFileHoldsExactlyTheBytesWritten(t *testing.T) {
	src := filepath.Join(t.TempDir(), "random")
	rng := rand.New(rand.NewSource(1))
	var buf bytes.Buffer
	for buf.Len() < 4<<20 {
		line := make([]byte, rng.Intn(200))
		rng.Read(line) // any byte: escapes, invalid UTF-8, NUL, \r
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(src, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// Both copies go to stdout: bytes of two different pipes have no order
	// between them that a reader could keep.
	s := newTestSupervisor(t, "cat "+src+"; cat "+src)
	id := spawn(t, s, "task")
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Fatalf("detail %+v", d)
	}
	got, err := os.ReadFile(logPath(t, s, id))
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(append(buf.Bytes(), buf.Bytes()...))
	if sha256.Sum256(got) != want || len(got) != 2*buf.Len() {
		t.Fatalf("log file: %d bytes, checksum differs from the %d bytes written", len(got), 2*buf.Len())
	}
}

func logPath(t *testing.T, s *Supervisor, id string) string {
	t.Helper()
	p, err := s.LogPath(id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor waits, driven by the supervisor's events, until cond holds.
func waitFor(t *testing.T, s *Supervisor, d time.Duration, cond func() bool) {
	t.Helper()
	sub := s.Subscribe()
	defer sub.Close()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond) // for conditions no event announces (process groups)
	defer tick.Stop()
	for !cond() {
		select {
		case <-sub.Ready():
			sub.Drain()
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("condition not met within %s", d)
		}
	}
}

// Processes that leave the submission's process group (setsid, as a
// daemonizing server does) are found by their SUBDASH_SUBMISSION_ID and
// terminated too: after a self-exit, and on interrupt.
func TestProcessesThatLeftTheGroupDoNotOutliveTheSubmission(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	// The sleeps' arguments are unique to this test process: another
	// worktree's test run may have its own sleeps on the same machine.
	u := fmt.Sprintf(".%d", os.Getpid())
	for _, c := range []struct{ msg, how string }{
		// the shell stays a moment, so the test sees the sleep before
		// the submission's end terminates it
		{`setsid sleep 301` + u + ` & echo started; sleep 1`, "self-exit"},
		{`setsid sleep 302` + u + ` & echo started; sleep 60`, "interrupt"},
	} {
		id := spawn(t, s, c.msg)
		waitForLine(t, s, id, "started", 5*time.Second)
		word := strings.Fields(c.msg)[2] // 301.<pid> or 302.<pid>
		// After a self-exit the supervisor may terminate the sleep before
		// this poll sees it (under load): its end is what counts there.
		waitFor(t, s, 5*time.Second, func() bool {
			return len(sleepers(word)) == 1 || c.how == "self-exit" && listOf(s)[len(listOf(s))-1].Status != proto.StatusRunning
		})
		if c.how == "interrupt" {
			if _, err := s.Interrupt(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}
		waitFinal(t, s, id)
		waitFor(t, s, 15*time.Second, func() bool { return len(sleepers(word)) == 0 })
	}
}

// sleepers lists the pids of `sleep <arg>` processes.
func sleepers(arg string) []int {
	var out []int
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil || string(b) != "sleep\x00"+arg+"\x00" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(n)))
		if local.ProcessAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestAFloodsLastLinesShowWhileItRuns: a flood is read in batches for
// the display lines (localProcess.read); what the last batch holds is
// shown once the child goes quiet, while it still runs, not only when it
// ends.
func TestAFloodsLastLinesShowWhileItRuns(t *testing.T) {
	s := newTestSupervisor(t, `seq 1 400000; echo flood-then-quiet; exec sleep 60`)
	id := spawn(t, s, "task")
	waitForLine(t, s, id, "flood-then-quiet", 20*time.Second)
	got := lines(t, s, id)
	if n := len(got); n < 2 || got[n-2] != "400000" || got[n-1] != "flood-then-quiet" {
		t.Fatalf("last lines %q", got[max(0, len(got)-3):])
	}
	if a, _ := s.Agent(id); a.Status != proto.StatusRunning {
		t.Fatalf("status %s; the child still sleeps", a.Status)
	}
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
}

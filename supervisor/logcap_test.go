package supervisor

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// flood prints floodBytes: 100,000 numbered lines of 74 bytes, then its
// last line.
const (
	flood            = `seq -f 'line %08g xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' 1 100000; echo the-last-line`
	floodBytes int64 = 100000*74 + int64(len("the-last-line\n"))
)

// TestLogCapThroughTheHost: a submission flooding far over --max-log-size
// leaves log files under the cap with the last line; list says how much
// was dropped (log_dropped), the journal and the record keep it; ctl logs
// and the pager mark the cut, the raw log is the child's bytes with the
// gap said beside them; last_output is the end of the output; a host
// restarted on the records reads the submission back with the marker.
func TestLogCapThroughTheHost(t *testing.T) {
	const capBytes = 1 << 20
	start, _ := hostOf(t, flood)
	s := start(func(c *Config) { c.MaxLogSize = capBytes })
	id := spawn(t, s, "go")
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || !strings.HasSuffix(strOf(d.LastOutput), "the-last-line") {
		t.Fatalf("%s %q", d.Status, strOf(d.LastOutput))
	}
	path := logPath(t, s, id)
	paths, _ := filepath.Glob(path + "*")
	var size int64
	for _, p := range paths {
		fi, _ := os.Stat(p)
		size += fi.Size()
	}
	if size > capBytes || len(paths) < 2 {
		t.Fatalf("log files %v hold %d bytes, cap %d", paths, size, capBytes)
	}
	dropped := summaryOf(t, s, id).LogDropped
	if dropped < 5_000_000 {
		t.Fatalf("log_dropped %d", dropped)
	}
	var raw bytes.Buffer
	var gaps []proto.LogGap
	if err := s.WriteRawLog(t.Context(), &raw, id, 0, func(g []proto.LogGap) { gaps = g }); err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 1 || gaps[0].Bytes != dropped || !gaps[0].Cap || int64(raw.Len())+dropped != floodBytes ||
		!bytes.HasPrefix(raw.Bytes(), []byte("line 00000001 ")) || !bytes.HasSuffix(raw.Bytes(), []byte("\nthe-last-line\n")) {
		t.Fatalf("raw: %d bytes, gaps %+v, dropped %d", raw.Len(), gaps, dropped)
	}
	marker := fmt.Sprintf("subdash: %d bytes (%s) of output dropped here by --max-log-size", dropped, proto.FormatBytes(dropped))
	text, err := s.Logs(id, 0)
	if err != nil || strings.Count(text, marker) != 1 || !strings.HasSuffix(text, "the-last-line\n") {
		t.Fatalf("ctl logs: %v; marker %d times; ends %q", err, strings.Count(text, marker), text[max(0, len(text)-40):])
	}
	var pager bytes.Buffer
	if err := s.WriteLines(t.Context(), &pager, id, 0, true); err != nil || strings.Count(pager.String(), marker) != 1 {
		t.Fatalf("pager: %v, marker %d times", err, strings.Count(pager.String(), marker))
	}
	// (the note where the head ended scrolled out of the scrollback)
	if got := strings.Join(lines(t, s, id), "\n"); !strings.Contains(got, fmt.Sprintf("subdash: %d bytes of this output are not in its log file", dropped)) {
		t.Errorf("the log pane does not say the log was capped")
	}
	journalText, _ := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
	if !strings.Contains(string(journalText), fmt.Sprintf(`"log_dropped":%d`, dropped)) {
		t.Errorf("the journal lacks log_dropped")
	}
	shutdownNow(t, s)

	s2 := start(func(c *Config) { c.MaxLogSize = capBytes })
	if got := summaryOf(t, s2, id).LogDropped; got != dropped {
		t.Errorf("restored log_dropped %d, want %d", got, dropped)
	}
	back := lines(t, s2, id)
	found := false
	for i, l := range back {
		if l == marker+" (the log keeps the first and the last part)" {
			found = i > 0 && strings.HasPrefix(back[i-1], "line ") && strings.HasPrefix(back[i+1], "line ")
		}
	}
	if !found || back[len(back)-1] != "the-last-line" {
		t.Errorf("read back: marker between lines %v, last %q", found, back[len(back)-1])
	}
}

// TestLogCapOff: --max-log-size 0 keeps every byte in one file.
func TestLogCapOff(t *testing.T) {
	s := newTestSupervisor(t, flood, func(c *Config) { c.MaxLogSize = 0 })
	id := spawn(t, s, "go")
	waitFinal(t, s, id)
	fi, err := os.Stat(logPath(t, s, id))
	paths, _ := filepath.Glob(logPath(t, s, id) + ".*")
	if err != nil || fi.Size() != floodBytes || len(paths) != 0 || summaryOf(t, s, id).LogDropped != 0 {
		t.Errorf("log %v %v, parts %v", fi, err, paths)
	}
}

// TestFreeSpaceFloorThroughTheHost: with the state directory's filesystem
// below the floor, an agent runs to its end with its output on screen,
// its log missing it and saying so; the host warns (every screen gets the
// warning) and warns again when space returns; the journal keeps writing.
func TestFreeSpaceFloorThroughTheHost(t *testing.T) {
	var mu sync.Mutex
	free := uint64(10 << 20) // of 1 GiB: below the floor of 51 MiB
	statfs := func(string) (uint64, uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		return free, 1 << 30, nil
	}
	s := newTestSupervisor(t, `read m; echo "got $m"; echo done`, func(c *Config) { c.Statfs = statfs })
	sub := s.Subscribe()
	defer sub.Close()
	id := spawn(t, s, "one")
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || strOf(d.LastOutput) != "got one\ndone" {
		t.Fatalf("%s %q", d.Status, strOf(d.LastOutput))
	}
	if b, _ := os.ReadFile(logPath(t, s, id)); len(b) != 0 {
		t.Errorf("the log holds %q below the floor", b)
	}
	if got := summaryOf(t, s, id).LogDropped; got != int64(len("got one\ndone\n")) {
		t.Errorf("log_dropped %d", got)
	}
	warned := strings.Join(s.Config().Warnings, "\n")
	if !strings.Contains(warned, "logging paused: the filesystem of "+s.Config().StateDir+" has 10.5 MB free: writing on would take it below its floor of 53.7 MB") {
		t.Errorf("warnings: %q", warned)
	}
	if got := strings.Join(lines(t, s, id), "\n"); !strings.Contains(got, "got one") || !strings.Contains(got, "subdash: logging paused") {
		t.Errorf("log pane:\n%s", got)
	}
	mu.Lock()
	free = 900 << 20
	mu.Unlock()
	s.space.Recheck()
	id2 := spawn(t, s, "two")
	waitFinal(t, s, id2)
	if b, _ := os.ReadFile(logPath(t, s, id2)); string(b) != "got two\ndone\n" {
		t.Errorf("after space returned the log holds %q", b)
	}
	if warned := strings.Join(s.Config().Warnings, "\n"); !strings.Contains(warned, "logging resumed") {
		t.Errorf("no warning that logging resumed: %q", warned)
	}
	ev, _ := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
	var n int
	for _, l := range strings.Split(string(ev), "\n") {
		if strings.Contains(l, `"event":"submission_ended"`) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d submission_ended events in the journal, want 2", n)
	}
}

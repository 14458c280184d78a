package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/subdash/subdash/supervisor/runner"
)

// capped returns an Output writing to a fresh log under a cap of limit bytes
// and the floor space (nil: none), and the log's path.
func capped(t *testing.T, limit int64, space *Space) (*Output, string, *[]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "1-x.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var noted []string
	o := New(Options{MaxLines: 100, MaxLogSize: limit, Space: space, Noted: func(s string) {
		mu.Lock()
		noted = append(noted, s)
		mu.Unlock()
	}})
	o.SetLog(f)
	return o, path, &noted
}

// numbered is n lines "line <i> <pad>" of about width bytes each.
func numbered(from, n, width int) []byte {
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		s := fmt.Sprintf("line %07d ", i)
		b.WriteString(s + strings.Repeat("x", max(0, width-len(s)-1)) + "\n")
	}
	return b.Bytes()
}

// diskBytes is what the log's files hold on disk together.
func diskBytes(t *testing.T, path string) (int64, []string) {
	t.Helper()
	paths, _ := filepath.Glob(path + "*")
	var n int64
	var names []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
		names = append(names, filepath.Base(p))
	}
	return n, names
}

// TestLogCapFlood: a flood far over the cap leaves files that together
// stay under it, the head ending and every tail part starting at a line
// boundary, the last line kept; the log read back holds the head, one
// marker with the exact count of dropped bytes, and the tail, and raw
// reading gives only the child's bytes (SPEC §5).
func TestLogCapFlood(t *testing.T) {
	const limit = 1 << 20
	o, path, noted := capped(t, limit, nil)
	var all bytes.Buffer
	for i := 0; i < 600; i++ { // about 6 MB in reads of 10 kB
		p := numbered(i*100, 100, 100)
		all.Write(p)
		o.Feed(runner.Stdout, p)
	}
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	size, names := diskBytes(t, path)
	if size > limit || len(names) > 1+tailParts {
		t.Fatalf("the log's files hold %d bytes in %v, over the cap of %d", size, names, limit)
	}
	lg, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(lg)
	lg.Close()
	if err != nil {
		t.Fatal(err)
	}
	gaps := gapsOf(t, path)
	if len(gaps) != 1 || !gaps[0].Cap || gaps[0].LowSpace {
		t.Fatalf("gaps %+v, want one of the cap", gaps)
	}
	g := gaps[0]
	whole := all.Bytes()
	head, tail := raw[:g.At], raw[g.At:]
	if int64(len(raw))+g.Bytes != int64(len(whole)) || !bytes.HasPrefix(whole, head) || !bytes.HasSuffix(whole, tail) {
		t.Fatalf("raw log (%d bytes, gap of %d at %d) is not the head and the tail of the output (%d bytes)", len(raw), g.Bytes, g.At, len(whole))
	}
	if head[len(head)-1] != '\n' || whole[len(head)+int(g.Bytes)-1] != '\n' {
		t.Errorf("the cut is not at line boundaries")
	}
	if int64(len(head)) > limit/2 || int64(len(head)) < limit/2-100 {
		t.Errorf("head of %d bytes, want just under %d", len(head), limit/2)
	}
	if !bytes.HasSuffix(raw, numbered(59999, 1, 100)) {
		t.Errorf("the last line is not in the log")
	}
	if o.LogDropped() != g.Bytes {
		t.Errorf("LogDropped %d, the log misses %d", o.LogDropped(), g.Bytes)
	}
	var text bytes.Buffer
	lg, _ = OpenLog(path)
	if err := lg.WriteLines(&text, false); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	want := fmt.Sprintf("subdash: %d bytes (", g.Bytes)
	lines := strings.Split(text.String(), "\n")
	marks := 0
	for i, l := range lines {
		if strings.HasPrefix(l, want) && strings.Contains(l, "dropped here by --max-log-size") {
			marks++
			if !strings.HasPrefix(lines[i+1], "line ") || !strings.HasPrefix(lines[i-1], "line ") {
				t.Errorf("marker not between whole lines: %q / %q", lines[i-1], lines[i+1])
			}
		}
	}
	if marks != 1 {
		t.Errorf("%d markers in the plain log, want 1", marks)
	}
	if got := strings.Join(*noted, "\n"); !strings.Contains(got, "the log file keeps the first 512KiB of this output") ||
		!strings.Contains(got, fmt.Sprintf("%d bytes of this output are not in its log file 1-x.log", g.Bytes)) {
		t.Errorf("log pane notes:\n%s", got)
	}
}

func gapsOf(t *testing.T, path string) []Gap {
	t.Helper()
	lg, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	return lg.Gaps()
}

// TestLogCapLongLine: a line longer than a part is cut where it has to be,
// and the files still stay under the cap.
func TestLogCapLongLine(t *testing.T) {
	const limit = 64 << 10
	o, path, _ := capped(t, limit, nil)
	line := bytes.Repeat([]byte("y"), 300<<10)
	o.Feed(runner.Stdout, line)
	o.Feed(runner.Stdout, []byte("\nthe end\n"))
	_ = o.Finish()
	if size, names := diskBytes(t, path); size > limit {
		t.Fatalf("%d bytes in %v", size, names)
	}
	lg, _ := OpenLog(path)
	raw, _ := io.ReadAll(lg)
	lg.Close()
	if !bytes.HasSuffix(raw, []byte("\nthe end\n")) || !bytes.HasPrefix(raw, bytes.Repeat([]byte("y"), limit/2)) {
		t.Errorf("raw log %d bytes: %.20q … %.20q", len(raw), raw, raw[len(raw)-20:])
	}
}

// TestLogUnderTheCap: output under the cap is one file, byte for byte,
// with no gap and no note.
func TestLogUnderTheCap(t *testing.T) {
	o, path, noted := capped(t, 1<<20, nil)
	p := numbered(0, 100, 50)
	o.Feed(runner.Stdout, p)
	_ = o.Finish()
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, p) {
		t.Fatalf("log %d bytes, %v", len(b), err)
	}
	if _, names := diskBytes(t, path); len(names) != 1 || len(gapsOf(t, path)) != 0 || len(*noted) != 0 || o.LogDropped() != 0 {
		t.Errorf("files %v, gaps %v, notes %q, dropped %d", names, gapsOf(t, path), *noted, o.LogDropped())
	}
}

// fakeDisk is a filesystem for Space whose free bytes a test sets.
type fakeDisk struct {
	mu          sync.Mutex
	free, total uint64
	looks       int
}

func (d *fakeDisk) statfs(string) (uint64, uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.looks++
	return d.free, d.total, nil
}

func (d *fakeDisk) set(free uint64) {
	d.mu.Lock()
	d.free = free
	d.mu.Unlock()
}

// TestFreeSpaceFloor: below the floor (the smaller of 1 GiB and 5 %)
// logging pauses, said once in the pane and to the host; the display goes
// on; once a tenth above the floor is free it resumes at the next line, the
// bytes not written marked in the log; a flood costs a look at the disk
// every 64 MiB at most, not one per write.
func TestFreeSpaceFloor(t *testing.T) {
	disk := &fakeDisk{free: 100 << 20, total: 1 << 30} // floor: 5 % = 51.2 MiB
	var changes []string
	space := NewSpace("/state", disk.statfs, func(paused bool, why string) {
		changes = append(changes, fmt.Sprint(paused, " ", why))
	})
	o, path, noted := capped(t, 0, space)
	o.Feed(runner.Stdout, []byte("before\n"))
	disk.set(40 << 20)
	space.credit.Store(0) // as if 64 MiB were written since the last look
	o.Feed(runner.Stdout, []byte("lost one\nlost two\n"))
	o.Feed(runner.Stdout, []byte("lost three\n"))
	if !space.Paused() || len(changes) != 1 || !strings.HasPrefix(changes[0], "true the filesystem of /state has 41.9 MB free: writing on would take it below its floor of 53.7 MB") {
		t.Fatalf("paused %v, changes %q", space.Paused(), changes)
	}
	disk.set(55 << 20) // above the floor, not a tenth above
	space.last = space.last.Add(-recheck)
	o.Feed(runner.Stdout, []byte("lost four\n"))
	disk.set(80 << 20)
	space.last = space.last.Add(-recheck)
	o.Feed(runner.Stdout, []byte("the rest of a line\nafter\n"))
	_ = o.Finish()
	if space.Paused() || len(changes) != 2 {
		t.Fatalf("paused %v, changes %q", space.Paused(), changes)
	}
	lg, _ := OpenLog(path)
	raw, _ := io.ReadAll(lg)
	lg.Close()
	lost := len("lost one\nlost two\nlost three\nlost four\nthe rest of a line\n")
	gaps := gapsOf(t, path)
	if string(raw) != "before\nafter\n" || len(gaps) != 1 || gaps[0].Bytes != int64(lost) || !gaps[0].LowSpace || gaps[0].Cap || o.LogDropped() != int64(lost) {
		t.Fatalf("raw %q, gaps %+v, dropped %d", raw, gaps, o.LogDropped())
	}
	var text bytes.Buffer
	lg, _ = OpenLog(path)
	_ = lg.WriteLines(&text, false)
	lg.Close()
	if want := fmt.Sprintf("before\nsubdash: %d bytes (%d B) of output not logged here: free space on the state directory's filesystem was below the floor\nafter\n", lost, lost); text.String() != want {
		t.Errorf("plain log:\n%s\nwant:\n%s", text.String(), want)
	}
	got := strings.Join(*noted, "\n")
	if !strings.Contains(got, "logging paused: the filesystem of /state has") || !strings.Contains(got, "logging resumed: ") {
		t.Errorf("pane notes:\n%s", got)
	}
	if w := lines(t, o); !strings.Contains(strings.Join(w, "\n"), "lost three") {
		t.Errorf("the display lost output while logging paused: %q", w)
	}
}

// TestFreeSpaceFloorDoesNotFlap: a large write that would cross the floor
// pauses logging; a smaller one that would fit does not resume it, nor does
// space that only a pause left: only space freed (a tenth of the floor more
// than the least free while paused) does. The 50 MB tmpfs under four floods
// paused and resumed five times in ten seconds before.
func TestFreeSpaceFloorDoesNotFlap(t *testing.T) {
	disk := &fakeDisk{free: 60 << 20, total: 1 << 30} // floor: 51.2 MiB
	var changes []bool
	space := NewSpace("/state", disk.statfs, func(paused bool, _ string) { changes = append(changes, paused) })
	space.credit.Store(0)
	if space.allow(10 << 20) {
		t.Fatal("a 10 MiB write 60 MiB free allowed: it takes the disk below the 51.2 MiB floor")
	}
	for _, free := range []uint64{60 << 20, 62 << 20, 58 << 20, 63 << 20} {
		disk.set(free)
		space.last = space.last.Add(-recheck)
		if space.allow(1 << 10) {
			t.Fatalf("resumed with %d MiB free, no space freed since the pause (the least was 58)", free>>20)
		}
	}
	disk.set(64 << 20) // 58 + 5.12 MiB
	space.last = space.last.Add(-recheck)
	if !space.allow(1<<10) || !slices.Equal(changes, []bool{true, false}) {
		t.Fatalf("changes %v after space was freed", changes)
	}
}

func lines(t *testing.T, o *Output) []string {
	t.Helper()
	_, _, ls, _ := o.Window(0, 1<<20)
	var out []string
	for _, l := range ls {
		out = append(out, l.Text)
	}
	return out
}

// TestFreeSpaceLooksSeldom: a flood above the floor looks at the disk once
// every maxCredit bytes.
func TestFreeSpaceLooksSeldom(t *testing.T) {
	disk := &fakeDisk{free: 100 << 30, total: 1 << 40}
	space := NewSpace("/state", disk.statfs, nil)
	for i := 0; i < 1000; i++ {
		if !space.allow(1 << 20) {
			t.Fatal("refused above the floor")
		}
	}
	if want := 1000/(maxCredit>>20) + 1; disk.looks > want {
		t.Errorf("%d looks for 1000 MiB, want at most %d", disk.looks, want)
	}
}

// TestReloadAcrossTheCut: a submission read back from a capped log shows
// the marker where the cut is, then the tail with the last line.
func TestReloadAcrossTheCut(t *testing.T) {
	o, path, _ := capped(t, 128<<10, nil)
	for i := 0; i < 100; i++ {
		o.Feed(runner.Stdout, numbered(i*100, 100, 40))
	}
	_ = o.Finish()
	o.Release()
	o.evict()
	if err := o.Reload(path, 100000); err != nil {
		t.Fatal(err)
	}
	got := lines(t, o)
	marker := -1
	for i, l := range got {
		if strings.Contains(l, "dropped here by --max-log-size") {
			marker = i
		}
	}
	if marker < 1 || !strings.HasPrefix(got[marker-1], "line ") || !strings.HasPrefix(got[marker+1], "line ") || !strings.HasPrefix(got[len(got)-1], "line 0009999") {
		t.Fatalf("read back: marker at %d of %d lines; last %q", marker, len(got), got[len(got)-1])
	}
	if _, err := OpenLog(filepath.Join(t.TempDir(), "none.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a gone log: %v", err)
	}
}

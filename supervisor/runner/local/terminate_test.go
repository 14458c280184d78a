package local

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTerminateOfManyReadsNoProc: ending many submissions at once (quit,
// close --all) waits for each main process, the group's leader, without a
// look at /proc while it lives: a group whose leader was its only member
// is gone once the leader is reaped, and kill(2) says so. Every look reads
// every process's stat; a thousand groups ended together made the host
// read /proc over and over, its most work at quit under load.
func TestTerminateOfManyReadsNoProc(t *testing.T) {
	t.Run("process group", func(t *testing.T) { terminateManyReadsNoProc(t, nil) })
	t.Run("cgroup", func(t *testing.T) {
		r := cgroupRunner(t)
		terminateManyReadsNoProc(t, func(i int) *subCgroup { return r.cg.forSubmission(fmt.Sprintf("many-%d", i)) })
	})
}

// terminateManyReadsNoProc ends 20 single-process groups at once, each in
// the cgroup into(i) makes (into nil: none), and fails when that read /proc.
func terminateManyReadsNoProc(t *testing.T, into func(i int) *subCgroup) {
	scan := procScan.scan
	var scans atomic.Int64
	procScan.scan = func() procTable { scans.Add(1); return scan() }
	defer func() { procScan.scan = scan }()
	const n = 20
	ps := make([]*process, n)
	for i := range ps {
		var cg *subCgroup
		if into != nil {
			cg = into(i)
		}
		p, err := startProcess("exec sleep 30", t.TempDir(), os.Environ(), func(w io.WriteCloser) { w.Close() }, streamSink{}, cg) //nolint:errcheck // the child's stdin, nothing written: its Close cannot lose data
		if err != nil {
			t.Fatal(err)
		}
		if into != nil && p.cg == nil {
			t.Fatal("the process started in no cgroup")
		}
		ps[i] = p
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Terminate(5*time.Second, nil); err != nil {
				t.Error(err)
			}
			<-p.Exited()
			p.Drain()
		}()
	}
	wg.Wait()
	for _, p := range ps {
		if groupAlive(p.pgid) {
			t.Fatalf("group %d outlived Terminate", p.pgid)
		}
	}
	if got := scans.Load(); got != 0 {
		t.Fatalf("ending %d single-process groups read /proc %d times, want none", n, got)
	}
}

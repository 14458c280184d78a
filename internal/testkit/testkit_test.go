package testkit

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestPollReturnsTheValueOnceItHolds(t *testing.T) {
	n := 0
	got := Poll(t, 5*time.Second, "the third look", func() (int, bool) { n++; return n, n == 3 })
	if got != 3 || n != 3 {
		t.Fatalf("Poll = %d after %d looks, want 3 after 3", got, n)
	}
}

func TestPollFailsWithWhatAndTheLastValue(t *testing.T) {
	f := &fakeT{}
	start := time.Now()
	Poll(f, 50*time.Millisecond, "the screen to show x", func() (string, bool) { return "a screen without it", false })
	if took := time.Since(start); took < 50*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %s, want about 50ms", took)
	}
	if !strings.Contains(f.failed, "the screen to show x: not within 50ms") || !strings.Contains(f.failed, "\na screen without it") {
		t.Errorf("failure %q", f.failed)
	}
}

func TestEventually(t *testing.T) {
	f := &fakeT{}
	Eventually(f, 20*time.Millisecond, "never", func() bool { return false })
	if f.failed != "never: not within 20ms; last: the condition was false" {
		t.Errorf("failure %q", f.failed)
	}
	var calls int
	Eventually(t, time.Second, "at once", func() bool { calls++; return true })
	if calls != 1 {
		t.Errorf("a condition that holds at once was looked at %d times", calls)
	}
}

func TestSyncBufferTakesConcurrentWritesAndReads(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 400 {
		t.Fatalf("%d bytes, want 400", n)
	}
}

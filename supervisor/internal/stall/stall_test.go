package stall

import (
	"testing"
	"time"
)

// The rule on one clock: silence for after makes it stalled, once;
// output, CPU time used and a pending approval are signs of life.
func TestClockRule(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	after := 3 * time.Second
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cpu := func(d time.Duration) Sample { return Sample{CPU: d, CPUKnown: true} }

	c := NewClock(t0)
	if got := c.Check(at(time.Second), after, cpu(time.Second)); got != Same {
		t.Fatalf("first reading: %v", got)
	}
	if got := c.Check(at(3*time.Second), after, cpu(time.Second)); got != Same {
		t.Fatalf("2 s of silence after the first reading: %v, want not stalled yet", got)
	}
	if got := c.Check(at(4*time.Second), after, cpu(time.Second)); got != Stalled {
		t.Fatalf("3 s of silence: %v, want Stalled", got)
	}
	since, ok := c.Since()
	if !ok || !since.Equal(at(4*time.Second)) {
		t.Fatalf("Since = %v %v, want the time of the check that found it", since, ok)
	}
	if got := c.Check(at(9*time.Second), after, cpu(time.Second)); got != Same {
		t.Fatalf("still silent: %v, want Same (stalled once, not again)", got)
	}
	if got := c.Check(at(10*time.Second), after, cpu(2*time.Second)); got != Cleared {
		t.Fatalf("CPU time used: %v, want Cleared", got)
	}
	if _, ok := c.Since(); ok {
		t.Fatal("cleared, yet Since says stalled")
	}

	// Output clears at once (Touch), and counts as life at the next check.
	if got := c.Check(at(13*time.Second), after, cpu(2*time.Second)); got != Stalled {
		t.Fatalf("silent again for 3 s: %v", got)
	}
	if !c.Touch() {
		t.Fatal("output on a stalled clock did not clear it")
	}
	if c.Touch() {
		t.Fatal("a second output cleared it again")
	}
	if got := c.Check(at(15*time.Second), after, cpu(2*time.Second)); got != Same {
		t.Fatalf("after output: %v, want Same", got)
	}
	if got := c.Check(at(17*time.Second), after, cpu(2*time.Second)); got != Same {
		t.Fatalf("2 s after output: %v, want not stalled yet", got)
	}

	// A pending approval pauses the clock: no stall however long it waits;
	// the count starts again once it is answered.
	for d := 18 * time.Second; d < time.Minute; d += time.Second {
		if got := c.Check(at(d), after, Sample{CPU: 2 * time.Second, CPUKnown: true, Paused: true}); got != Same {
			t.Fatalf("approval pending at %v: %v", d, got)
		}
	}
	if got := c.Check(at(time.Minute+time.Second), after, cpu(2*time.Second)); got != Same {
		t.Fatalf("2 s after the approval: %v", got)
	}
	if got := c.Check(at(time.Minute+2*time.Second), after, cpu(2*time.Second)); got != Stalled {
		t.Fatalf("3 s after the approval: %v, want Stalled", got)
	}
}

// Without CPU readings (the Kubernetes runner) output alone counts.
func TestClockWithoutCPU(t *testing.T) {
	t0 := time.Now()
	c := NewClock(t0)
	c.Touch()
	if got := c.Check(t0.Add(2*time.Second), time.Second, Sample{}); got != Same {
		t.Fatalf("output since the last check: %v", got)
	}
	if got := c.Check(t0.Add(3*time.Second), time.Second, Sample{}); got != Stalled {
		t.Fatalf("a second of silence: %v, want Stalled", got)
	}
}

func TestInterval(t *testing.T) {
	for _, c := range []struct{ after, want time.Duration }{
		{time.Second, time.Second}, {3 * time.Second, time.Second}, {time.Minute, 6 * time.Second},
		{DefaultAfter, 30 * time.Second}, {time.Hour, 30 * time.Second},
	} {
		if got := Interval(c.after); got != c.want {
			t.Errorf("Interval(%v) = %v, want %v", c.after, got, c.want)
		}
	}
}

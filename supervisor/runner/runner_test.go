package runner

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestExitOf: SPEC §4's words for how a main process ended: a code, a
// signal by its name, a signal without a name by its number.
func TestExitOf(t *testing.T) {
	if e := ExitOf(3, 0); e.Code == nil || *e.Code != 3 || e.Signal != "" {
		t.Errorf("exit 3: %+v", e)
	}
	if e := ExitOf(0, syscall.SIGKILL); e.Code != nil || e.Signal != "SIGKILL" {
		t.Errorf("SIGKILL: %+v", e)
	}
	if e := ExitOf(0, syscall.Signal(77)); e.Code != nil || e.Signal != "signal 77" {
		t.Errorf("signal 77: %+v", e)
	}
}

// TestWaitQuiet: it returns once the streams end, or once no output came
// for quiet, counted from the latest output.
func TestWaitQuiet(t *testing.T) {
	var last atomic.Int64
	done := make(chan struct{})
	close(done)
	start := time.Now()
	WaitQuiet(&last, done, time.Hour)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("streams that ended: waited %s", d)
	}
	const quiet = 200 * time.Millisecond
	last.Store(time.Now().Add(100 * time.Millisecond).UnixNano()) // output "arrives" after the call
	start = time.Now()
	WaitQuiet(&last, make(chan struct{}), quiet)
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("returned %s after the call, before %s of quiet after the latest output", d, quiet)
	}
}

// TestKubeOptionsGiven: a --kube-start-timeout equal to its default is as
// good as not given; any other --kube-* flag counts.
func TestKubeOptionsGiven(t *testing.T) {
	for _, k := range []KubeOptions{{}, {StartTimeout: DefaultKubeStartTimeout}} {
		if k.Given() {
			t.Errorf("%+v counts as given", k)
		}
	}
	for _, k := range []KubeOptions{{Image: "x"}, {Namespace: "n"}, {Node: "n"}, {Env: []string{"A"}}, {Secrets: []string{"s"}}, {StartTimeout: time.Second}} {
		if !k.Given() {
			t.Errorf("%+v counts as not given", k)
		}
	}
}

// TestRegister: a registered factory is found by its name, another is not.
func TestRegister(t *testing.T) {
	var got Settings
	Register("test-runner", func(s Settings) (Runner, error) { got = s; return nil, nil })
	f, ok := Lookup("test-runner")
	if !ok {
		t.Fatal("a registered runner is not found")
	}
	if _, err := f(Settings{Grace: time.Second, Host: Host{RunID: "r"}}); err != nil || got.Grace != time.Second || got.Host.RunID != "r" {
		t.Fatalf("the factory got %+v, %v", got, err)
	}
	if _, ok := Lookup("no-such-runner"); ok {
		t.Fatal("an unknown runner is found")
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor"
)

// fakeCLIs returns the environment that puts the stand-in claude, codex
// and gemini of testdata/fakecli first on PATH, and the file under base
// where they log each run (its arguments and message).
func fakeCLIs(t *testing.T, base string) (env []string, calls string) {
	t.Helper()
	fake, err := filepath.Abs("testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	calls = filepath.Join(base, "calls.log")
	return []string{"PATH=" + fake + ":" + os.Getenv("PATH"), "FAKECLI_LOG=" + calls}, calls
}

// TestPresetThroughTheBinary runs `subdash serve --preset codex` with the
// fake CLIs of testdata/fakecli first on PATH (they check their arguments
// and replay the real CLIs' recordings) and drives it with ctl: the
// follow-up resumes the thread the first run reported, list and wait show
// that thread id, and last_output is the final answer, not JSON.
func TestPresetThroughTheBinary(t *testing.T) {
	w := newWorkspace(t)
	env, calls := fakeCLIs(t, w.base)
	p := start(t, env, append([]string{"serve", "--preset", "codex"}, w.flags()...)...)
	waitListening(t, p, w.socket)

	var sp supervisor.SpawnResult
	ctlOK(t, w, &sp, "spawn", "say hi")
	var wr supervisor.WaitResult
	ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
	const thread = "01a22c75-d518-7a43-8ad2-67959028ffd4"
	d := wr.Details[sp.AgentID]
	if d.Status != supervisor.StatusCompleted || !strings.HasPrefix(*d.LastOutput, "STUB-REPLY #3") || d.SessionID != thread {
		t.Fatalf("first run: %s %q session %q", d.Status, *d.LastOutput, d.SessionID)
	}
	ctlOK(t, w, nil, "send", sp.AgentID, "and again")
	ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
	if d := wr.Details[sp.AgentID]; d.Status != supervisor.StatusCompleted || !strings.HasPrefix(*d.LastOutput, "STUB-REPLY #4: saw 3 user message(s)") {
		t.Fatalf("follow-up: %s %q", d.Status, *d.LastOutput)
	}
	if out := ctlOK(t, w, nil, "list"); !strings.Contains(out, `"session_id": "`+thread+`"`) {
		t.Fatalf("list lacks the thread id: %s", out)
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"codex\texec --json --skip-git-repo-check -\tsay hi",
		"codex\texec --json --skip-git-repo-check resume " + thread + " -\tand again",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the fake codex was run as\n%q\nwant\n%q", got, want)
	}
}

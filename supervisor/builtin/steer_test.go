package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/transcript"
)

func userJSON(id, text string) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":%q}]},"uuid":%q}`+"\n", text, id)
}

// waitFor polls out until it holds want, or fails after 10 s.
func waitFor(t *testing.T, out *testkit.SyncBuffer, want string) {
	t.Helper()
	testkit.Poll(t, 10*time.Second, fmt.Sprintf("%q in the output", want), func() (string, bool) {
		got := out.String()
		return got, strings.Contains(got, want)
	})
}

// A message written while a task walks its files is taken between two
// files (folded) and, being a task, runs once the first is done; one
// written after a task ended runs as a next task (next_turn); the agent
// ends when stdin closes, with the last task's status.
func TestSteeredRun(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", i)), []byte("// TODO: item\n"), 0o644))
	}
	must(t, os.Mkdir(filepath.Join(dir, "tests"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tests", "a_test.go"), []byte("// FIXME: flaky\n"), 0o644))
	stdin, w := io.Pipe()
	var out, errOut testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), stdin, &out, &errOut, dir, []string{"--pace", "5ms", "--input-format", "stream-json"})
	}()
	write(t, w, userJSON("first", "find TODO in ."))
	waitFor(t, &out, "f03.go")
	write(t, w, userJSON("11111111-2222-3333-4444-555555555555", "also find FIXME in tests"))
	waitFor(t, &out, transcript.BuiltinDone)
	got := out.String()
	taken := lineWith(got, "↪ took message 11111111")
	if !strings.Contains(taken, "(folded) after ") || !strings.Contains(taken, ", before ") || !strings.HasSuffix(taken, ": also find FIXME in tests") {
		t.Errorf("folded line = %q", taken)
	}
	if id, r, ok := transcript.ParseBuiltinTaken([]byte(taken + "\n")); !ok || id != "11111111-2222-3333-4444-555555555555" || r != "folded" {
		t.Errorf("ParseBuiltinTaken(%q) = %q %q %v", taken, id, r, ok)
	}
	if !strings.Contains(got, "tests/a_test.go:1: // FIXME: flaky") {
		t.Errorf("the folded task did not run:\n%s", got)
	}
	if strings.Count(got, transcript.BuiltinDone) != 1 {
		t.Errorf("want one done line after the first task and its folded one:\n%s", got)
	}
	write(t, w, userJSON("next-1", "summarize tests"))
	waitFor(t, &out, "(next_turn) as a next task")
	testkit.Poll(t, 10*time.Second, "the next task's done line", func() (string, bool) {
		got := out.String()
		return got, strings.Count(got, transcript.BuiltinDone) >= 2
	})
	w.Close()
	select {
	case code := <-done:
		if code != StatusOK {
			t.Fatalf("status %d, stderr %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not end when stdin closed")
	}
	if got := out.String(); !strings.Contains(got, "1 file") || strings.Count(got, transcript.BuiltinDone) != 2 {
		t.Errorf("next task output:\n%s", got)
	}
}

// A first line that is not a stream-json user message is a usage error
// that says what a line should be.
func TestSteeredBadLine(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), strings.NewReader("audit .\n"), &out, &errOut, t.TempDir(), []string{"--input-format", "stream-json"})
	if code != StatusUsage || !strings.Contains(errOut.String(), `each stdin line is {"type":"user"`) {
		t.Errorf("status %d, stderr %q", code, errOut.String())
	}
}

// write writes s to the agent's stdin or fails the test.
func write(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

package transcript

import (
	"strings"
	"testing"
)

// TestNowFollowsTheRun: the row's "now" of a recorded claude run that
// calls a tool: the tool and its input while it runs, the model's words
// between, the first line of the answer once the result came; of a run
// that failed, claude's own error.
func TestNowFollowsTheRun(t *testing.T) {
	for _, c := range []struct {
		fixture string
		want    []string // in order, each seen after some line
		final   string
	}{
		{"claude-stream-tooluse.jsonl", []string{"thinking", "STUB-REPLY #17: running a command.", "→ Bash echo hello-from-tool > tool_out.txt; uname -s", "STUB-REPLY #18"}, "STUB-REPLY #18"},
		{"claude-stream-http500.jsonl", []string{"retrying model (attempt 1/2)", "retrying model (attempt 2/2)"}, "API Error: 500 stub: injected failure."},
		{"codex-exec-tooluse.jsonl", []string{"→ "}, ""},
		{"codex-app-server-steer.jsonl", []string{"→ shell sleep 6", "STUB-REPLY #2"}, "STUB-REPLY #2"},
		{"codex-app-server-http500.jsonl", nil, "We’re currently experiencing high demand"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			p := NewParser(fixtureFormat(t, c.fixture))
			var seen []string
			for _, l := range fixtureLines(t, c.fixture) {
				p.Line(l)
				if n := p.Now(); len(seen) == 0 || seen[len(seen)-1] != n {
					seen = append(seen, n)
				}
			}
			next := 0
			for _, s := range seen {
				if next < len(c.want) && strings.HasPrefix(s, c.want[next]) {
					next++
				}
			}
			if next < len(c.want) {
				t.Fatalf("now went %q; want, in order, %q (missing %q)", seen, c.want, c.want[next])
			}
			if got := seen[len(seen)-1]; !strings.HasPrefix(got, c.final) {
				t.Fatalf("now at the end %q, want %q", got, c.final)
			}
			for _, s := range seen {
				if strings.ContainsAny(s, "\n\x1b") || len([]rune(s)) > MaxNowRunes {
					t.Fatalf("now %q is not one clean line of at most %d runes", s, MaxNowRunes)
				}
			}
		})
	}
}

// TestNowOfMemo: memo's tool lines name the tool while it runs; its
// answer then speaks.
func TestNowOfMemo(t *testing.T) {
	p := NewParser(FormatMemo)
	for _, l := range []string{"[tool] read_file", `[input] {"path":"ui/layout.go"}`} {
		p.Line([]byte(l))
	}
	if got := p.Now(); !strings.HasPrefix(got, "→ read_file") {
		t.Fatalf("now during memo's tool call %q, want → read_file …", got)
	}
}

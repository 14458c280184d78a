package transcript

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixtureDir holds recorded output of the real CLIs (copied from
// shared/fixtures/agent-streams). The plain-text recordings there
// (claude-plain.txt, codex-exec-plain.*) are not this parser's input and are
// not copied.
const fixtureDir = "../../testdata/agent-streams"

func fixtureFormat(t *testing.T, name string) Format {
	t.Helper()
	for _, f := range []Format{FormatClaude, FormatCodex, FormatGemini} {
		if strings.HasPrefix(name, string(f)+"-") {
			return f
		}
	}
	t.Fatalf("no format for fixture %s", name)
	return ""
}

func fixtureNames(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.json*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

func fixtureLines(t *testing.T, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// transcript is what a parser made of a whole stream.
type transcript struct {
	p       *Parser
	entries []Entry
	// activity and pending are read after the last line, before End.
	activity, pending string
}

// run feeds lines to a new parser, then ends the stream.
func run(f Format, lines [][]byte) transcript {
	tr := transcript{p: NewParser(f)}
	for _, l := range lines {
		tr.entries = append(tr.entries, tr.p.Line(l)...)
	}
	tr.activity, tr.pending = tr.p.Activity(), tr.p.Pending()
	tr.entries = append(tr.entries, tr.p.End()...)
	return tr
}

// render is the golden form of a transcript: one entry per line with its
// non-zero fields, then the parser's state.
func render(tr transcript) string {
	var b strings.Builder
	for _, e := range tr.entries {
		b.WriteString(renderEntry(e))
		b.WriteByte('\n')
	}
	o := tr.p.Outcome()
	fmt.Fprintf(&b, "-- session=%q\n", tr.p.SessionID())
	fmt.Fprintf(&b, "-- before End: activity=%q pending=%q\n", tr.activity, tr.pending)
	fmt.Fprintf(&b, "-- outcome final=%v success=%v error=%q\n", o.Final, o.Success, o.Error)
	fmt.Fprintf(&b, "--   answer=%q\n", o.Answer)
	fmt.Fprintf(&b, "--   in=%d out=%d cost=%g ms=%d\n", o.InputTokens, o.OutputTokens, o.CostUSD, o.DurationMS)
	return b.String()
}

func renderEntry(e Entry) string {
	s := fmt.Sprintf("%-11s", e.Kind)
	add := func(k, v string) {
		s += " " + k + "=" + v
	}
	if e.Tool != "" {
		add("tool", e.Tool)
	}
	if e.ID != "" {
		add("id", e.ID)
	}
	if e.Summary != "" {
		add("summary", fmt.Sprintf("%q", e.Summary))
	}
	if e.IsError {
		add("error", "true")
	}
	if e.Text != "" {
		t := e.Text
		if e.Kind == KindMalformed && len(t) > 60 {
			t = fmt.Sprintf("%s…(%d bytes)", t[:60], len(t))
		}
		add("text", fmt.Sprintf("%q", t))
	}
	if e.MoreLines != 0 {
		add("more", fmt.Sprint(e.MoreLines))
	}
	if e.InputTokens != 0 || e.OutputTokens != 0 || e.CostUSD != 0 || e.DurationMS != 0 {
		add("usage", fmt.Sprintf("in:%d,out:%d,cost:%g,ms:%d", e.InputTokens, e.OutputTokens, e.CostUSD, e.DurationMS))
	}
	return s
}

func countKind(entries []Entry, k Kind) int {
	n := 0
	for _, e := range entries {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestFixturesGolden parses every recorded stream whole, cut in the middle
// (no final event), and with a garbage line inserted and a line cut in half,
// and compares with testdata/<fixture>.golden (refresh with -update).
func TestFixturesGolden(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			f := fixtureFormat(t, name)
			lines := fixtureLines(t, name)
			var b strings.Builder

			full := run(f, lines)
			fmt.Fprintf(&b, "== full: %d lines\n%s", len(lines), render(full))
			if n := countKind(full.entries, KindMalformed) + countKind(full.entries, KindUnknown); n != 0 {
				t.Errorf("a recorded stream gave %d malformed/unknown entries", n)
			}

			mid := len(lines) / 2
			cut := run(f, lines[:mid])
			fmt.Fprintf(&b, "\n== truncated: first %d lines\n%s", mid, render(cut))
			if cut.p.Outcome().Final {
				t.Errorf("truncated stream: Outcome.Final = true, want false")
			}
			if cut.p.Activity() != "" || cut.p.Pending() != "" {
				t.Errorf("truncated stream: after End, Activity = %q, Pending = %q; want both empty", cut.p.Activity(), cut.p.Pending())
			}

			half := lines[mid][:len(lines[mid])/2]
			bad := append(append(append([][]byte{}, lines[:mid]...),
				[]byte("garbage that is not JSON {"), half), lines[mid+1:]...)
			mal := run(f, bad)
			fmt.Fprintf(&b, "\n== malformed: garbage line and line %d cut in half\n%s", mid+1, render(mal))
			if n := countKind(mal.entries, KindMalformed); n != 2 {
				t.Errorf("malformed variant: %d malformed entries, want 2", n)
			}
			if mid+1 < len(lines) && mal.p.Outcome() != full.p.Outcome() && full.p.Outcome().Final {
				// Only the answer may differ, when the cut line carried it.
				mo, fo := mal.p.Outcome(), full.p.Outcome()
				mo.Answer, fo.Answer = "", ""
				if mo != fo {
					t.Errorf("malformed variant: Outcome = %+v, want %+v as the whole stream", mal.p.Outcome(), full.p.Outcome())
				}
			}

			checkGolden(t, name, b.String())
		})
	}
}

// checkGolden compares got with testdata/<name>.golden, or writes it there
// with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("transcript differs from %s (go test -update rewrites it):\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\nwant: %s\n got: %s", i+1, wl, gl)
		}
	}
	return "(no difference)"
}

// TestFixturesOutcome states, independently of the golden files, what each
// recorded stream must yield.
func TestFixturesOutcome(t *testing.T) {
	tests := []struct {
		name           string
		final, success bool
		session        string
		answer, err    string // prefixes
	}{
		{"claude-output-json.json", true, true, "60d22987-7403-4044-a50a-6838919bf75c", "STUB-REPLY #8: saw 1 user", ""},
		{"claude-stream.jsonl", true, true, "2bd13c3f-4df6-4741-b685-171bec4f0dbf", "STUB-REPLY #4:", ""},
		{"claude-stream-http500.jsonl", true, false, "d248fba1-069b-4307-a781-d8e9c9ac5c4d", "", "API Error: 500 stub: injected failure."},
		{"claude-stream-partial.jsonl", true, true, "726e9979-8fed-44f4-bec4-3d714c4de4cf", "STUB-REPLY #25: saw 1 user message(s) (1 with text) in this request; last user text: 'say hi'", ""},
		{"claude-stream-resume.jsonl", true, true, "bb3437dd-a0f6-474d-bbdb-0c7f69a718d1", "STUB-REPLY #12: saw 2 user", ""},
		{"claude-stream-server-down.jsonl", true, false, "d3828b5e-e89c-43e9-a51e-c24fcff0a43f", "", "API Error: Unable to connect to API (ConnectionRefused)"},
		{"claude-stream-session1.jsonl", true, true, "bb3437dd-a0f6-474d-bbdb-0c7f69a718d1", "STUB-REPLY #10:", ""},
		{"claude-stream-tooluse.jsonl", true, true, "4965275c-0263-4142-a04c-2fbef00f8850", "STUB-REPLY #18: tool finished", ""},
		{"codex-app-server-approval-allow.jsonl", true, true, "01a2524e-4ae8-7540-b6a7-73ffdcb56abf", "STUB-REPLY #19: tool finished", ""},
		{"codex-app-server-approval-deny.jsonl", true, true, "01a2524e-573d-7542-8d24-8777ff1e4be5", "STUB-REPLY #21: tool finished; output was: 'exec_command failed:", ""},
		{"codex-app-server-http500.jsonl", true, false, "01a2524e-8244-7e72-a2a8-320229ebe9d2", "", "We’re currently experiencing high demand, which may cause temporary errors. (internalServerError)"},
		{"codex-app-server-interrupt.jsonl", true, false, "01a2524d-8d42-77c0-957d-ef93d5ddfc0f", "", "the turn was interrupted"},
		{"codex-app-server-resume.jsonl", true, true, "01a2524d-72a4-7781-8dd1-73f279007778", "STUB-REPLY #8: saw 4 user message(s) (3 typed", ""},
		{"codex-app-server-server-down.jsonl", true, false, "01a2524e-88ea-79b3-b9b8-dd0e88e40e2c", "", "the turn was interrupted"},
		{"codex-app-server-steer.jsonl", true, true, "01a2514c-ccac-7f82-a68c-73e61de53adc", "STUB-REPLY #2: saw 3 user message(s) (2 typed", ""},
		{"codex-app-server-steered.jsonl", true, true, "01a2524d-72a4-7781-8dd1-73f279007778", "STUB-REPLY #7: saw 3 user message(s) (2 typed", ""},
		{"codex-exec.jsonl", true, true, "01a22c75-c423-7a53-ab57-12dd7ebe8359", "STUB-REPLY #2:", ""},
		{"codex-exec-http500.jsonl", true, false, "01a22c78-4729-79b3-bb55-5b3ba5eb2154", "", "We’re currently experiencing high demand"},
		{"codex-exec-resume.jsonl", true, true, "01a22c75-d518-7a43-8ad2-67959028ffd4", "STUB-REPLY #4: saw 3 user", ""},
		{"codex-exec-server-down-hang.jsonl", false, false, "01a22c78-09c2-7923-a521-8d2b5293f225", "", "Reconnecting... waiting for network"},
		{"codex-exec-session1.jsonl", true, true, "01a22c75-d518-7a43-8ad2-67959028ffd4", "STUB-REPLY #3:", ""},
		{"codex-exec-tooluse.jsonl", true, true, "01a22c75-e676-7970-85ea-9e4ef0cda1f5", "STUB-REPLY #6: tool finished", ""},
		{"codex-exec-unknown-model.jsonl", true, true, "01a22c75-9311-7af3-a50d-5aa198e9e15c", "STUB-REPLY #1:", ""},
		{"gemini-stream.jsonl", true, true, "d6470405-0e93-493d-aaa4-1c0bc488b706", "STUB-REPLY #2: saw 1 user turn(s) (1 with text) in this request; last user text: \"<session_context> This is the Gemini CLI.", ""},
		{"gemini-stream-http500-timeout.jsonl", false, false, "da428d11-7def-4db0-9855-e7123a078c7f", "", ""},
		{"gemini-stream-resume.jsonl", true, true, "0549cb9e-6edf-43a8-9845-533bf51094b6", "STUB-REPLY #4: saw 2 user turn(s) (2 with text) in this request; last user text: 'second message: what was the word? '", ""},
		{"gemini-stream-server-down.jsonl", true, false, "3f6a72e1-ab92-4d5e-84f3-3689f1681c6d", "", "[API Error: exception TypeError: fetch failed sending request]"},
		{"gemini-stream-session1.jsonl", true, true, "0549cb9e-6edf-43a8-9845-533bf51094b6", "STUB-REPLY #2: saw 1 user turn(s)", ""},
		{"gemini-stream-tooluse.jsonl", true, true, "5f26f264-1ef1-4303-8a19-db3ecaa8b46f", "STUB-REPLY #9: tool finished; response was:", ""},
		{"claude-stream-approval-allow.jsonl", true, true, "7ba03943-5990-4915-82f6-bc62382f7e4c", "STUB-REPLY #6: tool finished; output was: '(Bash completed with no output)'", ""},
		{"claude-stream-approval-deny.jsonl", true, true, "dea7eb75-f299-4ff7-be28-ce6c71bf4664", "STUB-REPLY #9: tool finished; output was: 'no'", ""},
		{"claude-stream-askuserquestion.jsonl", true, true, "5ba57bdb-5b01-4716-b736-f2c48afb1010", `STUB-DONE: results: [1] Your questions have been answered: "Which DB?"="SQLite".`, ""},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			p := run(fixtureFormat(t, tt.name), fixtureLines(t, tt.name)).p
			o := p.Outcome()
			if o.Final != tt.final || o.Success != tt.success {
				t.Errorf("Final, Success = %v, %v; want %v, %v", o.Final, o.Success, tt.final, tt.success)
			}
			if p.SessionID() != tt.session {
				t.Errorf("SessionID = %q, want %q", p.SessionID(), tt.session)
			}
			if !strings.HasPrefix(o.Answer, tt.answer) || (tt.answer == "") != (o.Answer == "") {
				t.Errorf("Answer = %q, want prefix %q", o.Answer, tt.answer)
			}
			if !strings.HasPrefix(o.Error, tt.err) || (tt.err == "") != (o.Error == "") {
				t.Errorf("Error = %q, want prefix %q", o.Error, tt.err)
			}
		})
	}
	for _, name := range fixtureNames(t) {
		if !seen[name] {
			t.Errorf("fixture %s has no expected outcome here", name)
		}
	}
}

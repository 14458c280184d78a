package transcript

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memoFixtures holds Memo 0.9.1's recorded output (/work/notes/fixtures,
// memo.md): memo-<case>.out and .err, the bytes of stdout and stderr of
// `printf '%s' MSG | memo --dangerous`, and memo-session-<case>.jsonl, the
// session file of that run.
const memoFixtures = "../../testdata/memo"

// memoLines splits recorded stdout as the supervisor hands it to a parser:
// at "\n", "\r" trimmed, an unterminated last line as a line.
func memoLines(t *testing.T, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(memoFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// TestMemoFixturesGolden parses every recorded stdout of Memo whole and cut
// before its "[tokens]" line, and compares with
// testdata/memo-<case>.out.golden (refresh with -update).
func TestMemoFixturesGolden(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(memoFixtures, "memo-*.out"))
	if len(paths) < 10 {
		t.Fatalf("found %d Memo fixtures in %s", len(paths), memoFixtures)
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			lines := memoLines(t, name)
			var b strings.Builder
			full := run(FormatMemo, lines)
			fmt.Fprintf(&b, "== full: %d lines\n%s", len(lines), render(full))
			for _, e := range full.entries {
				if e.Kind == KindUnknown || e.Kind == KindMalformed {
					t.Errorf("recorded output gave %s entry %q", e.Kind, e.Text)
				}
				if strings.ContainsAny(e.Text, "\x1b\r") || strings.Contains(e.Text, "DANGEROUS MODE") || strings.HasPrefix(e.Text, "provider=") {
					t.Errorf("Memo's chrome in entry %+v", e)
				}
			}
			for i, l := range lines {
				if bytes.Contains(l, []byte("[tokens] prompt=")) {
					cut := run(FormatMemo, lines[:i])
					fmt.Fprintf(&b, "\n== cut before [tokens]: first %d lines\n%s", i, render(cut))
					if cut.p.Outcome().Final {
						t.Errorf("cut before [tokens]: Outcome.Final = true")
					}
				}
			}
			checkGolden(t, name, b.String())
		})
	}
}

// TestMemoOutcomes: what the dashboard says of each recorded run of Memo
// when only its stdout is at hand (SPEC §8): a failure Memo exits 0 after is
// errored with Memo's own message, the answer is the reply without Memo's
// chrome, and the tokens are those of "[tokens]".
func TestMemoOutcomes(t *testing.T) {
	for _, c := range []struct {
		name                 string
		success              bool
		err, answer, entries string
		in, out              int64
	}{
		{"memo-good.out", true, "", "MEMO-STUB-REPLY #1: saw 1 user message(s); last user text: 'say hi'",
			"user:say hi|text:MEMO-STUB-REPLY #1: saw 1 user message(s); last user text: 'say hi'|result:", 101, 10},
		{"memo-prev.out", true, "", "MEMO-STUB-REPLY #2: saw 2 user message(s); last user text: 'and again'",
			"init:memo continues its previous session (--prev: the last exchange)|user:and again|text:MEMO-STUB-REPLY #2: saw 2 user message(s); last user text: 'and again'|result:", 102, 10},
		{"memo-http500.out", false, "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure", "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure",
			"user:please FAIL_STATUS: 500|result:LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure", 0, 0},
		{"memo-down.out", false, "LLM call failed: Failed after 3 attempts. Last error: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:<PORT>", "LLM call failed: Failed after 3 attempts. Last error: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:<PORT>",
			"user:say hi|result:LLM call failed: Failed after 3 attempts. Last error: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:<PORT>", 0, 0},
		{"memo-nokey.out", false, "LLM call failed: Missing env var STUB_API_KEY (or OPENAI_API_KEY/DEEPSEEK_API_KEY)", "LLM call failed: Missing env var STUB_API_KEY (or OPENAI_API_KEY/DEEPSEEK_API_KEY)",
			"user:say hi|result:LLM call failed: Missing env var STUB_API_KEY (or OPENAI_API_KEY/DEEPSEEK_API_KEY)", 0, 0},
		{"memo-noconfig.out", false, "memo has no provider config (it printed its setup prompt: No provider config found. Please answer the prompts:); run memo once in a terminal to write its config.toml", "",
			"error:No provider config found. Please answer the prompts:", 0, 0},
		{"memo-shell.out", true, "", "MEMO-STUB-REPLY #7: tool result: 'Chunk ID: 899c75dfcc112\\nWall time: 0.0110 seconds\\nProcess exited with code 0\\nOriginal token count: 3\\nOutput:\\nshell-ok\\n'",
			"user:RUN_SHELL: echo shell-ok; ls|tool_call:exec_command echo shell-ok; ls|text:MEMO-STUB-REPLY #7: tool result: 'Chunk ID: 899c75dfcc112\\nWall time: 0.0110 seconds\\nProcess exited with code 0\\nOriginal token count: 3\\nOutput:\\nshell-ok\\n'|result:", 213, 20},
		{"memo-noapproval.out", false, "memo cancelled the turn: a tool was denied approval (" + memoCancelled + ")", memoCancelled,
			`user:RUN_SHELL: echo shell-ok|error:[approval required] exec_command: Tool "exec_command" requires approval.|error:[approval] Run with --dangerous to bypass approval|tool_call:exec_command echo shell-ok|result:memo cancelled the turn: a tool was denied approval (` + memoCancelled + ")", 108, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := run(FormatMemo, memoLines(t, c.name))
			o := tr.p.Outcome()
			if !o.Final || o.Success != c.success || o.Error != c.err || o.Answer != c.answer || o.InputTokens != c.in || o.OutputTokens != c.out {
				t.Errorf("Outcome = %+v\nwant final, success=%v error=%q answer=%q in=%d out=%d", o, c.success, c.err, c.answer, c.in, c.out)
			}
			var got []string
			for _, e := range tr.entries {
				s := string(e.Kind) + ":" + e.Text
				if e.Kind == KindToolCall {
					s = string(e.Kind) + ":" + e.Tool + " " + e.Summary
				}
				got = append(got, s)
			}
			if g := strings.Join(got, "|"); g != c.entries {
				t.Errorf("entries:\n%s\nwant:\n%s", g, c.entries)
			}
		})
	}
}

// TestMemoFirstLines: the transcript shows what Memo is doing as it happens,
// not only when its next block comes: the user message once its block is
// over (the model may take minutes to answer), a tool call at its input
// line (the tool may run for minutes).
func TestMemoFirstLines(t *testing.T) {
	erase := "\x1b[2K\x1b[1A\x1b[2K\x1b[G"
	p, got := feed(t, FormatMemo, "⚠️  DANGEROUS MODE: All tool approvals are bypassed!", "",
		erase+"User: fix the build", "", "")
	wantEntries(t, got, `user        text="fix the build"`)
	if a := p.Activity(); a != "thinking" {
		t.Errorf("activity after the user message = %q, want thinking", a)
	}
	got = nil
	for _, l := range []string{erase, erase + "[tool] exec_command"} {
		for _, e := range p.Line([]byte(l)) {
			got = append(got, renderEntry(e))
		}
	}
	if a := p.Activity(); a != "running exec_command" {
		t.Errorf("activity after [tool] = %q", a)
	}
	for _, e := range p.Line([]byte(erase + `[input] {"cmd":"go build ./..."}`)) {
		got = append(got, renderEntry(e))
	}
	wantEntries(t, got, `tool_call   tool=exec_command summary="go build ./..."`)
	if a := p.Activity(); a != "running exec_command: go build ./..." {
		t.Errorf("activity after [input] = %q", a)
	}
}

// TestMemoBlocks: the lines of one block stay together, blank lines and
// all (an answer of several paragraphs, a message of several lines), and
// only the frame's blank lines go; a text block followed by another text
// block before "[tokens]" (stderr mixed in, in a log read back) is not the
// answer.
func TestMemoBlocks(t *testing.T) {
	erase := "\x1b[2K\x1b[1A\x1b[2K\x1b[G"
	tr := run(FormatMemo, [][]byte{
		[]byte("User: line one"), []byte("line two"), []byte(""), []byte(""),
		[]byte(erase + "G0 [AI_RetryError]: Failed after 3 attempts."), []byte("    at createRetryError"), []byte(""),
		[]byte(erase), []byte("First paragraph."), []byte(""), []byte("Second \x1b[1mbold\x1b[0m paragraph.\t"), []byte(""),
		[]byte(erase), []byte("[tokens] prompt=7 completion=3 total=10"), []byte(""),
		[]byte(erase), []byte("provider=stub model=memo-stub"), []byte(""),
	})
	var got []string
	for _, e := range tr.entries {
		got = append(got, renderEntry(e))
	}
	wantEntries(t, got,
		`user        text="line one\nline two"`,
		`unknown     text="G0 [AI_RetryError]: Failed after 3 attempts.\n    at createRetryError"`,
		`text        text="First paragraph.\n\nSecond bold paragraph."`,
		`result      usage=in:7,out:3,cost:0,ms:0`)
	if o := tr.p.Outcome(); !o.Success || o.Answer != "First paragraph.\n\nSecond bold paragraph." {
		t.Errorf("Outcome = %+v", o)
	}
}

// TestMemoCutShort: a run that ends without "[tokens]" (killed, or its
// output cut) has no final outcome, and the text it printed is its answer
// so far.
func TestMemoCutShort(t *testing.T) {
	erase := "\x1b[2K\x1b[1A\x1b[2K\x1b[G"
	tr := run(FormatMemo, [][]byte{[]byte("User: go"), []byte(""), []byte(""), []byte(erase), []byte("half an answer")})
	if o := tr.p.Outcome(); o.Final || o.Answer != "half an answer" {
		t.Errorf("Outcome = %+v, want not final with the text as the answer", o)
	}
	if n := countKind(tr.entries, KindText); n != 1 {
		t.Errorf("%d text entries, want 1: %+v", n, tr.entries)
	}
}

// TestMemoSessionFiles reads the session file of each recorded run: the
// outcome Memo itself recorded (SPEC §8: it decides where the host reads
// it), also where stdout cannot tell (a denied tool approval).
func TestMemoSessionFiles(t *testing.T) {
	for _, c := range []struct {
		name, id, status, err, answer string
		in, out                       int64
	}{
		{"good", "80960d22-4584-42d9-a9f0-411555640146", "ok", "", "MEMO-STUB-REPLY #1: saw 1 user message(s); last user text: 'say hi' ", 101, 10},
		{"http500", "c22e2dc2-7c19-4703-8983-5d2c4e5ee070", "error", "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure", "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure", 0, 0},
		{"nokey", "", "error", "LLM call failed: Missing env var STUB_API_KEY (or OPENAI_API_KEY/DEEPSEEK_API_KEY)", "LLM call failed: Missing env var STUB_API_KEY (or OPENAI_API_KEY/DEEPSEEK_API_KEY)", 0, 0},
		{"shell", "0e084324-940f-42b4-874d-8468d2e96264", "ok", "", "", 213, 20},
		{"noapproval", "454708cc-a0fa-4c28-bc9c-a05a80d069d7", "cancelled", "memo cancelled the turn: a tool was denied approval (" + memoCancelled + ")", memoCancelled, 108, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(memoFixtures, "memo-session-"+c.name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
			s, err := ReadMemoSession(f)
			if err != nil {
				t.Fatal(err)
			}
			o := s.Outcome
			if (c.id != "" && s.ID != c.id) || s.ID == "" || s.Status != c.status || !o.Final || o.Success != (c.status == "ok") || o.Error != c.err ||
				(c.answer != "" && o.Answer != c.answer) || o.Answer == "" || o.InputTokens != c.in || o.OutputTokens != c.out || o.DurationMS <= 0 {
				t.Errorf("session = %+v\nwant id %q status %q error %q answer %q tokens %d/%d", s, c.id, c.status, c.err, c.answer, c.in, c.out)
			}
		})
	}
}

// TestMemoSessionTorn: a session file cut mid-turn (the run was killed) has
// no final outcome; one holding no event at all is an error.
func TestMemoSessionTorn(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(memoFixtures, "memo-session-good.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"type":"final"`))
	if i < 0 {
		t.Fatal("no final event in the fixture")
	}
	s, err := ReadMemoSession(bytes.NewReader(data[:i]))
	if err != nil || s.Outcome.Final || s.Message != "say hi" || s.ID == "" {
		t.Errorf("torn session = %+v, %v; want its message and id, not final", s, err)
	}
	if _, err := ReadMemoSession(strings.NewReader("not json\n")); err == nil {
		t.Error("a file without events read without an error")
	}
	long := `{"type":"observation","content":"` + strings.Repeat("x", maxMemoEventBytes) + "\"}\n"
	s, err = ReadMemoSession(strings.NewReader(long + string(data)))
	if err != nil || !s.Outcome.Success {
		t.Errorf("a session with a long line before its events = %+v, %v", s, err)
	}
}

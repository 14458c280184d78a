package transcript

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestClaudeDenialMatchesClaude: for each tool permission request recorded
// in claude-permission-denials.jsonl (claude 2.1.328 against the stub:
// the can_use_tool request it sends with --permission-prompt-tool stdio,
// and the words it gives its model for the same call in -p mode without
// one), ClaudeDenial gives claude's words. The compound Bash command,
// whose parts claude names from its own parse, gets claude's words for
// any other tool.
func TestClaudeDenialMatchesClaude(t *testing.T) {
	f, err := os.Open(filepath.Join(fixtureDir, "denials", "claude-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Case    string          `json:"case"`
			Cwd     string          `json:"cwd"`
			Denial  string          `json:"denial"`
			Request json.RawMessage `json:"request"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		n++
		c, ok := ParseClaudeControl(rec.Request)
		if !ok {
			t.Fatalf("%s: the recorded request does not parse", rec.Case)
		}
		want := rec.Denial
		if rec.Case == "bash-compound" {
			want = "Claude requested permissions to use Bash, but you haven't granted it yet."
		}
		if got := ClaudeDenial(c, rec.Cwd); got != want {
			t.Errorf("%s:\n got %q\nwant %q", rec.Case, got, want)
		}
	}
	if err := sc.Err(); err != nil || n < 10 {
		t.Fatalf("read %d recorded requests: %v", n, err)
	}
}

// TestParserKeepsClaudesWorkingDirectory: the cwd of claude's init line
// is what ClaudeDenial words paths against.
func TestParserKeepsClaudesWorkingDirectory(t *testing.T) {
	p := NewParser(FormatClaude)
	if p.Cwd() != "" {
		t.Fatalf("cwd before the init line: %q", p.Cwd())
	}
	p.Line([]byte(`{"type":"system","subtype":"init","cwd":"/HOME/w","session_id":"s","model":"m","tools":[]}`))
	if p.Cwd() != "/HOME/w" {
		t.Fatalf("cwd after the init line: %q", p.Cwd())
	}
}

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// searchCommand is the agent command of the search tests: it prints the
// message with the word "needle" coloured inside ("nee" red, "dle"
// plain: what a person reads as one word), and a message starting with
// "write" appends two lines to notes.txt in the work tree.
const searchCommand = `read m; case "$m" in write*) printf 'one\ntwo\n' >> notes.txt;; esac; printf 'saw \033[31mnee\033[0mdle in %s\n' "$m"`

// git runs git in dir with a fixed identity, failing the test on error.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

// searchLines runs `ctl search args…` and returns its hits and the
// summary line that ends them (JSON Lines, SPEC §6).
func searchLines(t *testing.T, w workspace, args ...string) ([]proto.SearchHit, proto.SearchSummary) {
	t.Helper()
	out := ctlOK(t, w, nil, append([]string{"search"}, args...)...)
	var hits []proto.SearchHit
	var sum proto.SearchSummary
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Bytes()
		if strings.Contains(string(line), `"hits"`) {
			if err := json.Unmarshal(line, &sum); err != nil {
				t.Fatalf("summary line %q: %v", line, err)
			}
			continue
		}
		var h proto.SearchHit
		if err := json.Unmarshal(line, &h); err != nil {
			t.Fatalf("hit line %q: %v", line, err)
		}
		hits = append(hits, h)
	}
	return hits, sum
}

// TestSearchAndChangesThroughTheBinary (SPEC §6 search, §15): in a git
// work tree, an audit that reads and one that writes; ctl search finds a
// word coloured inside in both agents' output, as plain text, and keeps
// finding it after the host restarted (restored agents); list counts the
// writer's changes and ±0 for the reader; ctl diff prints the writer's
// lines; a bad regular expression is a usage error (exit 2); the user's
// git index is left as it was.
func TestSearchAndChangesThroughTheBinary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorkspace(t)
	git(t, w.dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(w.dir, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, w.dir, "add", "README")
	git(t, w.dir, "commit", "-q", "-m", "first")
	indexBefore, err := os.ReadFile(filepath.Join(w.dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	host := serveWith(t, w, nil, "--command", searchCommand, "--grace", "200ms")

	var reader, writer proto.SpawnResult
	ctlOK(t, w, &reader, "spawn", "audit the docs")
	waitDone(t, w, reader.AgentID)
	ctlOK(t, w, &writer, "spawn", "write the notes")
	waitDone(t, w, writer.AgentID)

	hits, sum := searchLines(t, w, "needle")
	if len(hits) != 2 || sum.Hits != 2 || sum.Truncated {
		t.Fatalf("search needle: %d hits %+v, summary %+v; want one per agent", len(hits), hits, sum)
	}
	byAgent := map[string]proto.SearchHit{}
	for _, h := range hits {
		byAgent[h.AgentID] = h
	}
	if h := byAgent[reader.AgentID]; h.Text != "saw needle in audit the docs" || h.Seq != 1 || !strings.HasPrefix(h.AgentPath, "/root/") {
		t.Errorf("the reader's hit: %+v; want its plain text, submission 1, its agent path", h)
	}
	if hits, _ := searchLines(t, w, "needle", "--agent", writer.AgentID); len(hits) != 1 || hits[0].AgentID != writer.AgentID {
		t.Errorf("search --agent the writer: %+v", hits)
	}
	if hits, _ := searchLines(t, w, "Needle"); len(hits) != 0 {
		t.Errorf("smart case: an upper-case query matched %+v", hits)
	}
	if hits, _ := searchLines(t, w, `saw n.*dle in write`, "--regex"); len(hits) != 1 || hits[0].AgentID != writer.AgentID {
		t.Errorf("search --regex: %+v", hits)
	}
	if r := runCtl(t, nil, "", "search", "(", "--regex", "--socket", w.socket); r.code != 2 || !strings.Contains(r.stderr, "regular expression") || r.stdout != "" {
		t.Errorf("a bad regex: exit %d, stdout %q, stderr %q; want exit 2 naming the regular expression", r.code, r.stdout, r.stderr)
	}

	agents := listAgents(t, w)
	if c := agents[writer.AgentID].Changes; c == nil || !c.Tracked || c.Files != 1 || c.Added != 2 || c.Removed != 0 {
		t.Errorf("the writer's changes: %+v; want 1 file, +2 −0", c)
	}
	if c := agents[reader.AgentID].Changes; c == nil || !c.Tracked || c.Files != 0 || c.Short() != "±0" {
		t.Errorf("the reader's changes: %+v; want ±0", c)
	}
	diff := ctlOK(t, w, nil, "diff", writer.AgentID)
	if !strings.Contains(diff, "notes.txt") || !strings.Contains(diff, "\n+one\n+two") || strings.Contains(diff, "\x1b[") {
		t.Errorf("ctl diff of the writer (not a terminal: no colour):\n%s", diff)
	}
	if got := ctlOK(t, w, nil, "diff", reader.AgentID); strings.Contains(got, "+++") {
		t.Errorf("ctl diff of the reader shows changes:\n%s", got)
	}
	if indexAfter, err := os.ReadFile(filepath.Join(w.dir, ".git", "index")); err != nil || string(indexAfter) != string(indexBefore) {
		t.Errorf("the user's git index changed under the snapshots (err %v)", err)
	}

	// A restarted host searches its restored agents' logs.
	if err := host.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	host.wait(t)
	serveWith(t, w, nil, "--command", searchCommand, "--grace", "200ms")
	if hits, _ := searchLines(t, w, "needle"); len(hits) != 2 {
		t.Errorf("after a restart: %+v; want both restored agents' hits", hits)
	}
	if c := listAgents(t, w)[writer.AgentID].Changes; c == nil || c.Files != 1 {
		t.Errorf("after a restart the writer's changes are %+v", c)
	}
}

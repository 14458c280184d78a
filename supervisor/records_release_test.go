package supervisor

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// release2b64651 is where testdata/2b64651 was written (see its gen.sh):
// the journals name the working directory, the logs and the message files
// under it.
const release2b64651 = "/tmp/subdash-2b64651"

// The runs of testdata/2b64651 and the agents and session they hold.
const (
	mcpRun         = "20261207T203251Z-c19367" // subdash mcp --tools multi-agent, ended with SIGTERM
	serveRun       = "20261207T203259Z-8398ba" // subdash serve: restores mcpRun, ends at once
	releaseSession = "mcp-client-26888-1291404"
	leadID         = "857249b8-c437-4075-922e-90e06c026a3d"
	steererID      = "8f5c7645-df2e-42d9-9e34-6ef1327adcd8"
	alphaID        = "6c283fd6-bae1-4611-8c80-9c7a70c01641"
	betaID         = "4f1c9aef-85c3-406f-8f19-ef8d9cf3236a"
)

// releaseState copies the runs of testdata/2b64651 but those named in
// without into a state directory under a temporary base, the journals'
// paths moved there and their modification times set to their last line's
// time (git keeps no times). It returns the base, holding state/ and
// work/.
func releaseState(t *testing.T, without ...string) string {
	t.Helper()
	base := t.TempDir()
	src := filepath.Join("testdata", "2b64651", "runs")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if slices.Contains(without, strings.Split(rel, string(filepath.Separator))[0]) {
			return nil
		}
		dst := filepath.Join(base, "state", "runs", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d.Name() != "journal.jsonl" {
			return os.WriteFile(dst, b, 0o600)
		}
		b = bytes.ReplaceAll(b, []byte(release2b64651), []byte(base))
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return err
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		var last journal.Event
		if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
			return err
		}
		return os.Chtimes(dst, last.Time.Time, last.Time.Time)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	return base
}

// TestRecordsOf2b64651Restore (SPEC §10, §11, §14): the state directory
// that subdash at 2b64651 left (testdata/2b64651/gen.sh) restores into
// the same agents: their task names, agent paths and parents, the queued
// message of one and the held message and children's ends of another,
// the receipt of a steered message, and the session's root mailbox; the
// next submission of each takes its mailbox's whole text. Both as the
// events of the run that wrote them and as the checkpoint of the run
// that restored them.
func TestRecordsOf2b64651Restore(t *testing.T) {
	for _, c := range []struct{ name, without string }{
		{"events", serveRun},
		{"checkpoint", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := releaseState(t, c.without)
			s := newTestSupervisor(t, "", func(cfg *Config) {
				cfg.Dir, cfg.StateDir = filepath.Join(base, "work"), filepath.Join(base, "state")
				cfg.RestoreWindow = 100 * 365 * 24 * time.Hour
				// The built-in agent is this host's binary: here one that
				// ends at once, keeping the message it was given.
				cfg.Executable = "/bin/true"
			})
			if got := s.Restored(); got != 4 {
				t.Fatalf("restored %d agents, want 4; warnings %q", got, s.Config().Warnings)
			}
			type want struct {
				name, path, parent string
				status             proto.Status
				queued             []string
			}
			wants := map[string]want{
				leadID:    {"lead", "/root/lead", "", proto.StatusCompleted, []string{"a note held for the lead"}},
				steererID: {"steerer", "/root/steerer", "", proto.StatusErrored, []string{"summarize beta"}},
				alphaID:   {"alpha", "/root/lead/alpha", leadID, proto.StatusCompleted, nil},
				betaID:    {"beta", "/root/lead/beta", leadID, proto.StatusCompleted, nil},
			}
			for id, w := range wants {
				sum := summaryOf(t, s, id)
				if sum.TaskName != w.name || sum.AgentPath != w.path || sum.ParentID != w.parent || sum.Status != w.status {
					t.Errorf("%s restored as %q %q parent %q %s, want %q %q parent %q %s", id[:8],
						sum.TaskName, sum.AgentPath, sum.ParentID, sum.Status, w.name, w.path, w.parent, w.status)
				}
				if !slices.Equal(sum.QueuedMessages, w.queued) {
					t.Errorf("%s: queued messages %q, want %q", w.path, sum.QueuedMessages, w.queued)
				}
			}
			st := summaryOf(t, s, steererID).SteeredMessages
			if len(st) != 1 || st[0].Message != "also find FIXME in alpha" || st[0].Receipt != proto.ReceiptFolded || st[0].TakenAt.IsZero() {
				t.Errorf("steerer's steered messages: %+v; want the one folded into its turn", st)
			}

			// The session's root mailbox: the ends of the two agents it spawned.
			ms := proto.MinWaitTimeoutMS
			root, err := s.WaitMailbox(proto.WithCaller(t.Context(), proto.Caller{Session: releaseSession}), &ms, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ends []string
			for _, it := range root.Items {
				ends = append(ends, it.Path+" "+it.Status)
			}
			if !slices.Equal(ends, []string{"/root/lead completed", "/root/steerer interrupted"}) {
				t.Errorf("the session's root mailbox holds %q", ends)
			}

			// The next submission takes the mailbox whole, in order, before its own message.
			for _, c := range []struct {
				id   string
				want []string
			}{
				{steererID, []string{"summarize beta", "go on"}},
				{leadID, []string{"a note held for the lead", `<agent_completion path="/root/lead/beta" status="completed">`,
					`<agent_completion path="/root/lead/alpha" status="completed">`, "go on"}},
			} {
				res, err := s.Send(t.Context(), c.id, "go on", false)
				if err != nil {
					t.Fatalf("send to %s: %v", c.id[:8], err)
				}
				waitFinal(t, s, c.id)
				msg, err := s.Message(t.Context(), c.id, 0)
				if err != nil {
					t.Fatal(err)
				}
				rest, inOrder := msg, strings.HasPrefix(msg, c.want[0]) && strings.HasSuffix(msg, "\n\n"+c.want[len(c.want)-1])
				for _, part := range c.want {
					_, after, found := strings.Cut(rest, part)
					inOrder, rest = inOrder && found, after
				}
				if !inOrder || res.SubmissionID == "" {
					t.Errorf("the next submission of %s took %q, want %q in order, a blank line apart", c.id[:8], msg, c.want)
				}
				if sum := summaryOf(t, s, c.id); len(sum.QueuedMessages) != 0 {
					t.Errorf("%s still holds %q after its submission took its mailbox", c.id[:8], sum.QueuedMessages)
				}
			}
		})
	}
}

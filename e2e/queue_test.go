package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestMessageAtTheTurnsEndRunsOnce: a message queued (`ctl send
// --queue`, POST /v1/agents/{id}/send with queue) or followed up
// (`subdash mcp --tools multi-agent`'s followup_task) as the agent's turn
// ends starts exactly one further submission with that message, and
// nothing stays queued. Small messages and 8 MiB ones, which the host
// takes long to keep in a file between its check that the agent runs and
// the post, through each door.
//
// A door takes from a few to hundreds of milliseconds to reach the host's
// check, longer than the agent's turn, so each post starts first, aimed
// at the agent's path, and the spawn follows it by a delay that the test
// searches, door by door, for where the check meets the turn's end: later
// after a message that found the agent idle, earlier after one that found
// it running (or not spawned yet). The journal says which (the note of
// the next submission's "sent").
func TestMessageAtTheTurnsEndRunsOnce(t *testing.T) {
	w := newWorkspace(t)
	serveWith(t, w, nil, "--command", "cat >/dev/null; sleep 0.05; echo ok", "--max-agents", "4", "--grace", "200ms")
	cs, _, mcpErr := startMCP(t, []string{"MEMO_ENABLE_COLLAB_TOOLS=1"}, append([]string{"--tools", "multi-agent"}, w.flags()...)...)
	c := client.NewClient(w.socket, "")
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	large := strings.Repeat("x", 8<<20)
	// A door makes the post of text to the agent at target (what it can
	// prepare, it does before); the post says whether the host had no
	// such agent yet.
	type door struct {
		name  string
		large bool
		post  func(target, text string) func() (notFound bool, err error)
	}
	doors := []door{
		{"ctl send --queue", false, func(target, text string) func() (bool, error) {
			return func() (bool, error) {
				r := runCtl(t, nil, "", "send", target, text, "--queue", "--socket", w.socket)
				if r.code != 0 {
					return strings.Contains(r.stderr, "agent not found"), fmt.Errorf("exit %d: %s", r.code, r.stderr)
				}
				return false, nil
			}
		}},
		{"POST send queue", true, func(target, text string) func() (bool, error) { return postQueue(t, w.socket, target, text) }},
		{"followup_task", false, func(target, text string) func() (bool, error) {
			return func() (bool, error) { return followup(cs, target, text) }
		}},
		{"followup_task", true, func(target, text string) func() (bool, error) {
			return func() (bool, error) { return followup(cs, target, text) }
		}},
	}
	doors = append(doors, doors[1], doors[1]) // the door with the widest moment between the check and the post
	// Each door's search: the spawn's delay after the post's start known
	// to be too early (the post found the agent idle) and too late (it
	// found it running, or not there); until a delay is known too late,
	// the next is taken from how long the door's last post took.
	const unknown = time.Duration(-1)
	early := make([]time.Duration, len(doors))
	late := make([]time.Duration, len(doors))
	took := make([]time.Duration, len(doors))
	for k := range late {
		late[k] = unknown
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 41))
	atTheEnd := 0
	const iterations = 48
	for i := range iterations {
		k := i % len(doors)
		d := doors[k]
		text := fmt.Sprintf("next %d", i)
		if d.large {
			text += " " + large
		}
		delay := max(2*early[k]+10*time.Millisecond, took[k]-30*time.Millisecond)
		if late[k] != unknown {
			delay = (early[k] + late[k]) / 2
		}
		delay += time.Duration(rng.IntN(13)-6) * time.Millisecond // where the post lands against the turn's end: the subject of the test
		name := fmt.Sprintf("t%d", i)
		type posted struct {
			notFound bool
			err      error
		}
		done := make(chan posted, 1)
		post := d.post(proto.RootPath+"/"+name, text)
		start := time.Now()
		go func() {
			nf, err := post()
			done <- posted{nf, err}
		}()
		time.Sleep(max(delay, 0))
		sp, err := c.SpawnAgent(t.Context(), proto.SpawnRequest{Message: "first", TaskName: name})
		if err != nil {
			t.Fatal(err)
		}
		p := <-done
		took[k] = time.Since(start)
		if p.err != nil && !p.notFound {
			t.Fatalf("iteration %d (%s): %v; mcp stderr %s", i, d.name, p.err, mcpErr)
		}
		// The door answered: the message is in the mailbox of the running
		// submission, whose end starts the next at once, or in a next
		// submission already. An agent that runs nothing is done.
		sum := testkit.Poll(t, dashWait, "agent "+sp.AgentID[:8]+" to run nothing", func() (proto.Summary, bool) {
			ls, err := c.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range ls.Agents {
				if a.AgentID == sp.AgentID {
					return a, a.Status != proto.StatusRunning
				}
			}
			t.Fatalf("agent %s is not listed", sp.AgentID)
			return proto.Summary{}, false
		})
		want, seq := text, 2
		if p.notFound { // the spawn came too late: the message was refused, and nothing else runs
			want, seq = "first", 1
		}
		last, err := c.Message(t.Context(), sp.AgentID, seq)
		if _, errNext := c.Message(t.Context(), sp.AgentID, seq+1); err != nil || last != want || errNext == nil ||
			sum.Status != proto.StatusCompleted || len(sum.QueuedMessages) != 0 || sum.PendingStart {
			t.Fatalf("iteration %d (%s, %d bytes, the spawn %s after the post): status %s, queued %d message(s) %.40q; submission %d's message %d bytes %.40q (%v), a further one: %v",
				i, d.name, len(text), delay, sum.Status, len(sum.QueuedMessages), sum.QueuedMessages, seq, len(last), last, err, errNext == nil)
		}
		switch note := sentNote(t, info.RunDir, sp.AgentID); {
		case p.notFound:
			late[k] = delay
		case note == "": // sent at once: the turn had ended when the post came
			early[k] = delay
		default: // queued while the turn ran, or as it ended
			late[k] = delay
			if strings.Contains(note, "came as the previous submission ended") {
				atTheEnd++
			}
		}
		if late[k] != unknown && late[k] < early[k] { // noise: search around both again
			early[k], late[k] = max(0, late[k]-20*time.Millisecond), early[k]+20*time.Millisecond
		}
		if _, err := c.Forget(t.Context(), sp.AgentID); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(info.RunDir, sp.AgentID)); err != nil { // its 8 MiB files
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d messages came as the turn ended, after its end looked for queued messages", atTheEnd, iterations)
}

// sentNote returns the note of the journal's "sent" of agent id's
// second submission: "" when the message started it at once, else how
// the queued messages started it.
func sentNote(t *testing.T, runDir, id string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(runDir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Event   string `json:"event"`
			AgentID string `json:"agent_id"`
			Note    string `json:"note"`
			Seq     int    `json:"seq"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "sent" && ev.AgentID == id && ev.Seq == 2 {
			return ev.Note
		}
	}
	return ""
}

// postQueue makes the post of text as a queued message of the agent at
// target in one JSON body (POST /v1/agents/{id}/send {"message",
// "queue": true}), as a program other than ctl does, the body encoded
// beforehand. The post says whether the host had no such agent; err is
// any other refusal.
func postQueue(t *testing.T, socket, target, text string) func() (notFound bool, err error) {
	body, err := json.Marshal(map[string]any{"message": text, "queue": true})
	if err != nil {
		t.Fatal(err)
	}
	return func() (bool, error) { return postBody(socket, target, body) }
}

// postBody is the post of postQueue.
func postBody(socket, target string, body []byte) (notFound bool, err error) {
	hc := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post("http://subdash/v1/agents/"+strings.ReplaceAll(target, "/", "%2F")+"/send", "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close() //nolint:errcheck // read whole below: its Close cannot lose data
	var res proto.SendResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.AgentID == "" {
		return resp.StatusCode == http.StatusNotFound, fmt.Errorf("POST send queue: %s, %+v (%v)", resp.Status, res, err)
	}
	return false, nil
}

// followup calls followup_task of the multi-agent family. It says whether
// the host had no such agent; err is any other failure, or an answer
// that is not Memo's (text only: that family has no structured content).
func followup(cs *mcpsdk.ClientSession, target, text string) (notFound bool, err error) {
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "followup_task", Arguments: map[string]any{"target": target, "message": text}})
	if err != nil {
		return false, err
	}
	answer := ""
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcpsdk.TextContent); ok {
			answer = tc.Text
		}
	}
	var out struct {
		Triggered bool `json:"triggered"`
	}
	if err := json.Unmarshal([]byte(answer), &out); err != nil || res.IsError || !out.Triggered {
		return res.IsError && strings.Contains(answer, "agent not found"), fmt.Errorf("followup_task: %q (isError %v)", answer, res.IsError)
	}
	return false, nil
}

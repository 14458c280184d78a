package appserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The driver against codex 0.171.0's recorded answers
// (testdata/agent-streams/codex-app-server-*.jsonl, the stdout of
// submissions subdash ran against fake_openai.py): what it writes on the
// app-server's stdin, and what it tells the engine.

// stdin is a Writer that keeps what was written.
type stdin struct {
	lines  []map[string]any
	closed bool
}

func (w *stdin) Write(line []byte) bool {
	if w.closed {
		return false
	}
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil || !bytes.HasSuffix(line, []byte("\n")) {
		panic("not a JSON line: " + string(line))
	}
	w.lines = append(w.lines, v)
	return true
}

func (w *stdin) Close() { w.closed = true }

// methods returns the method of each line written ("answer" for an
// answer to a request of the app-server's).
func (w *stdin) methods() string {
	var out []string
	for _, l := range w.lines {
		m, _ := l["method"].(string)
		if m == "" {
			m = "answer"
		}
		out = append(out, m)
	}
	return strings.Join(out, " ")
}

// recorded returns the lines of fixture name.
func recorded(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent-streams", name))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// feed gives d the lines and returns the events, and the index of the
// line where stop held (len(lines) when it never did).
func feed(d *Driver, lines [][]byte, stop func(line []byte) bool) (evs []Event, at int) {
	for i, l := range lines {
		evs = append(evs, d.Line(l)...)
		if stop != nil && stop(l) {
			return evs, i + 1
		}
	}
	return evs, len(lines)
}

func has(s string) func([]byte) bool {
	return func(l []byte) bool { return bytes.Contains(l, []byte(s)) }
}

// A submission's start and a steer folded into its running turn, as
// recorded: initialize, initialized, thread/start with approvalPolicy
// never, turn/start of the message; the steer is a turn/steer of the
// running turn, and its userMessage item in that turn is the receipt.
func TestDriverStartAndFoldedSteer(t *testing.T) {
	lines := recorded(t, "codex-app-server-steered.jsonl")
	w := &stdin{}
	d := New(Config{MessageID: "287ef65f-1843-477d-a8c2-cfc9e1260cdc"}, w)
	d.Start("RUN_SHELL: sleep 4")
	evs, at := feed(d, lines, has(`"type":"commandExecution"`))
	if len(evs) != 0 || w.methods() != "initialize initialized thread/start turn/start" {
		t.Fatalf("start: events %+v, wrote %s", evs, w.methods())
	}
	if p := w.lines[2]["params"].(map[string]any); p["approvalPolicy"] != "never" {
		t.Fatalf("thread/start %v", p)
	}
	turn := w.lines[3]["params"].(map[string]any)
	if turn["threadId"] != "01a2524d-72a4-7781-8dd1-73f279007778" || turn["clientUserMessageId"] != "287ef65f-1843-477d-a8c2-cfc9e1260cdc" ||
		turn["input"].([]any)[0].(map[string]any)["text"] != "RUN_SHELL: sleep 4" {
		t.Fatalf("turn/start %v", turn)
	}
	const steerID = "1a326ab6-9e80-41e4-8783-926739c833be"
	if !d.Steer(steerID, "STEER: also say banana") {
		t.Fatal("steer refused while a turn runs")
	}
	st := w.lines[4]
	if st["method"] != "turn/steer" || st["id"] != "turn/steer#steer:"+steerID {
		t.Fatalf("steer wrote %v", st)
	}
	if p := st["params"].(map[string]any); p["expectedTurnId"] != "01a2524d-72be-7cc0-ba1f-87ffddc38535" || p["clientUserMessageId"] != steerID {
		t.Fatalf("turn/steer params %v", p)
	}
	evs, _ = feed(d, lines[at:], nil)
	if len(evs) != 1 || evs[0].Kind != EventTaken || evs[0].MessageID != steerID || !evs[0].Folded {
		t.Fatalf("events %+v, want the steer folded", evs)
	}
	if w.closed || !d.Idle() {
		t.Fatalf("closed %v, idle %v: the engine closes stdin at the turn's end", w.closed, d.Idle())
	}
}

// A steer codex refuses because the turn ended goes as a turn of its own
// (turn/start): its userMessage in that new turn is next_turn. A turn/start
// codex refuses too is not delivered, with codex's reason.
func TestDriverSteerAfterTheTurn(t *testing.T) {
	lines := recorded(t, "codex-app-server-steered.jsonl")
	w := &stdin{}
	d := New(Config{MessageID: "m"}, w)
	d.Start("go")
	_, at := feed(d, lines, has(`"type":"commandExecution"`))
	d.Steer("late", "one more")
	d.Steer("refused", "and another")
	feed(d, lines[at:], nil) // the turn ends: codex refuses the steers
	for _, id := range []string{"late", "refused"} {
		evs := d.Line([]byte(`{"error":{"code":-32600,"message":"no active turn to steer"},"id":"turn/steer#steer:` + id + `"}`))
		if len(evs) != 0 {
			t.Fatalf("%s: events %+v", id, evs)
		}
	}
	if got := w.methods(); !strings.HasSuffix(got, "turn/steer turn/steer turn/start turn/start") {
		t.Fatalf("wrote %s", got)
	}
	if d.Idle() {
		t.Fatal("idle with two steers asked for")
	}
	evs := d.Line([]byte(`{"error":{"code":-32600,"message":"the thread is gone"},"id":"turn/start#steer:refused"}`))
	if len(evs) != 1 || evs[0].Kind != EventUndelivered || evs[0].MessageID != "refused" || evs[0].Text != "codex refused it: the thread is gone" {
		t.Fatalf("refused turn/start: %+v", evs)
	}
	d.Line([]byte(`{"id":"turn/start#steer:late","result":{"turn":{"id":"t2","items":[],"status":"inProgress","error":null}}}`))
	evs = d.Line([]byte(`{"method":"item/started","params":{"item":{"type":"userMessage","id":"u","clientId":"late","content":[{"type":"text","text":"one more"}]},"threadId":"x","turnId":"t2"}}`))
	if len(evs) != 1 || evs[0].Kind != EventTaken || evs[0].Folded {
		t.Fatalf("events %+v, want next_turn", evs)
	}
	d.Line([]byte(`{"method":"turn/completed","params":{"threadId":"x","turn":{"id":"t2","items":[],"status":"completed","error":null}}}`))
	if !d.Idle() {
		t.Fatal("not idle with every steer answered")
	}
}

// A message steered before the message's turn began waits for its id,
// then goes as turn/steer of that turn.
func TestDriverSteerBeforeTheTurn(t *testing.T) {
	lines := recorded(t, "codex-app-server-steered.jsonl")
	w := &stdin{}
	d := New(Config{MessageID: "m"}, w)
	d.Start("go")
	if !d.Steer("early", "also this") {
		t.Fatal("steer refused before the turn")
	}
	feed(d, lines, has(`"id":"turn/start#message"`))
	last := w.lines[len(w.lines)-1]
	if last["method"] != "turn/steer" || last["params"].(map[string]any)["expectedTurnId"] != "01a2524d-72be-7cc0-ba1f-87ffddc38535" {
		t.Fatalf("wrote %s, last %v", w.methods(), last)
	}
}

// A stop interrupts the running turn and closes stdin only once it ended
// (recorded: turn/interrupt answered {}, turn/completed interrupted); a
// stop before any turn closes stdin at once. No steer goes after a stop.
func TestDriverInterrupt(t *testing.T) {
	lines := recorded(t, "codex-app-server-interrupt.jsonl")
	w := &stdin{}
	d := New(Config{MessageID: "m"}, w)
	d.Start("go")
	_, at := feed(d, lines, has(`"type":"commandExecution"`))
	if !d.Interrupt() {
		t.Fatal("interrupt not written")
	}
	last := w.lines[len(w.lines)-1]
	if last["method"] != "turn/interrupt" || last["params"].(map[string]any)["turnId"] != "01a2524d-8d77-70d3-9b37-e63f9abe0dc7" || w.closed {
		t.Fatalf("wrote %v, closed %v", last, w.closed)
	}
	if d.Steer("s", "too late") {
		t.Fatal("a steer went after the stop")
	}
	_, end := feed(d, lines[at:], has(`"method":"turn/completed"`))
	if !w.closed || at+end != len(lines) {
		t.Fatalf("closed %v at line %d of %d", w.closed, at+end, len(lines))
	}

	w = &stdin{}
	d = New(Config{}, w)
	d.Start("go")
	if !d.Interrupt() || !w.closed {
		t.Fatalf("a stop before the thread: closed %v", w.closed)
	}
	if d.Interrupt() {
		t.Fatal("a second stop after stdin closed")
	}
}

// A thread codex cannot resume is replaced by a new one; a refused
// initialize or thread/start ends the run (stdin closes).
func TestDriverStartRefusals(t *testing.T) {
	w := &stdin{}
	d := New(Config{ThreadID: "gone"}, w)
	d.Start("go")
	d.Line([]byte(`{"id":"initialize#message","result":{}}`))
	if p := w.lines[2]; p["method"] != "thread/resume" || p["params"].(map[string]any)["threadId"] != "gone" {
		t.Fatalf("wrote %v", p)
	}
	d.Line([]byte(`{"error":{"code":-32600,"message":"no rollout found for thread id gone"},"id":"thread/resume#message"}`))
	if w.methods() != "initialize initialized thread/resume thread/start" || w.closed {
		t.Fatalf("wrote %s, closed %v", w.methods(), w.closed)
	}
	d.Line([]byte(`{"error":{"code":-32600,"message":"bad"},"id":"thread/start#message"}`))
	if !w.closed {
		t.Fatal("a refused thread/start left stdin open")
	}
}

// Approvals: with Config.Approvals the request is the engine's to answer
// (accept, acceptForSession, decline; a permissions request gets what it
// asked for, or nothing); without, it is declined at once. Any other
// request of the app-server's is refused with an error answer.
func TestDriverApprovals(t *testing.T) {
	lines := recorded(t, "codex-app-server-approval-allow.jsonl")
	for _, c := range []struct {
		approvals bool
		decision  Decision
		want      string
	}{{true, Allow, "accept"}, {true, AllowAlways, "acceptForSession"}, {true, Deny, "decline"}, {false, Allow, "decline"}} {
		w := &stdin{}
		d := New(Config{MessageID: "m", Approvals: c.approvals}, w)
		d.Start("go")
		evs, _ := feed(d, lines, has(`"method":"item/commandExecution/requestApproval"`))
		if !c.approvals {
			if len(evs) != 1 || evs[0].Kind != EventDeclined || evs[0].RequestID != "0" {
				t.Fatalf("without approvals: %+v", evs)
			}
		} else {
			if p := w.lines[2]["params"].(map[string]any); p["approvalPolicy"] != "untrusted" {
				t.Fatalf("thread/start %v", p)
			}
			if len(evs) != 1 || evs[0].Kind != EventApproval || evs[0].RequestID != "0" || evs[0].Method != MethodCommandApproval {
				t.Fatalf("events %+v", evs)
			}
			if !d.Answer("0", c.decision) || d.Answer("0", c.decision) {
				t.Fatal("Answer: the request answers once")
			}
		}
		ans := w.lines[len(w.lines)-1]
		if ans["id"] != float64(0) || ans["result"].(map[string]any)["decision"] != c.want {
			t.Fatalf("answer %v, want %s", ans, c.want)
		}
	}

	w := &stdin{}
	d := New(Config{Approvals: true}, w)
	perm := `{"method":"item/permissions/requestApproval","id":"p1","params":{"threadId":"x","turnId":"t","itemId":"i","cwd":"/w","permissions":{"network":{"enabled":true}},"reason":"fetch"}}`
	for _, c := range []struct {
		decision Decision
		want     string
	}{{Allow, `{"permissions":{"network":{"enabled":true}},"scope":"turn"}`},
		{AllowAlways, `{"permissions":{"network":{"enabled":true}},"scope":"session"}`},
		{Deny, `{"permissions":{},"scope":"turn"}`}} {
		if evs := d.Line([]byte(perm)); len(evs) != 1 || evs[0].Kind != EventApproval {
			t.Fatalf("permissions request: %+v", evs)
		}
		d.Answer("p1", c.decision)
		got, _ := json.Marshal(w.lines[len(w.lines)-1]["result"])
		if string(got) != c.want {
			t.Fatalf("permissions answer %s, want %s", got, c.want)
		}
	}

	evs := d.Line([]byte(`{"method":"item/tool/requestUserInput","id":7,"params":{}}`))
	ans := w.lines[len(w.lines)-1]
	if len(evs) != 1 || evs[0].Kind != EventDeclined || ans["id"] != float64(7) || ans["error"] == nil {
		t.Fatalf("a request subdash does not answer: events %+v, wrote %v", evs, ans)
	}
	// a pending request the app-server resolves itself is withdrawn
	d.Line([]byte(perm))
	if evs := d.Line([]byte(`{"method":"serverRequest/resolved","params":{"threadId":"x","requestId":"p1"}}`)); len(evs) != 1 || evs[0].Kind != EventWithdrawn || evs[0].RequestID != "p1" {
		t.Fatalf("resolved: %+v", evs)
	}
}

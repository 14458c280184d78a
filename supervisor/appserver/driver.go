package appserver

import (
	"encoding/json"
	"sync"
)

// Writer is the app-server's stdin: a queue that takes a line at once and
// writes it from a goroutine of its own (steer.Stdin), so that no caller
// waits on a child that does not read. Write reports false once the queue
// closed; Close ends stdin once what is queued is written, and the
// app-server then exits.
type Writer interface {
	Write(line []byte) bool
	Close()
}

// Config is what a Driver needs of its submission.
type Config struct {
	// MessageID is the clientUserMessageId of the message's turn (the
	// submission id).
	MessageID string
	// ThreadID is the thread to continue (the agent's session id); ""
	// starts a new thread. A thread codex cannot resume is replaced by a
	// new one, which the transcript says (its error response).
	ThreadID string
	// Approvals relays the app-server's approval requests to a person
	// (--approvals, SPEC §12): every thread runs with approvalPolicy
	// "untrusted", so codex asks before any command it does not know to
	// be safe (codex 0.171.0 takes that policy from a client, no longer
	// from its config file, whose "on-request" asks only when the model
	// asks to leave the sandbox). Without it every thread runs with
	// approvalPolicy "never", so no turn waits for an answer nobody gives,
	// and a request that comes anyway is declined.
	Approvals bool
	// Version is subdash's version, for initialize's clientInfo.
	Version string
}

// Driver speaks the app-server protocol for one submission (one process):
// it starts or resumes the thread, starts the turn of the message, steers
// messages into the running turn, answers approval requests and stops the
// turn, writing requests on the app-server's stdin and reading its stdout
// lines (Line). It closes stdin when the submission cannot go on (a
// request of the start refused) and after a stop once the turn ended; the
// engine closes it once the last turn ended with no steered message
// pending (SPEC §8). Safe for concurrent use; it never calls out while
// holding its lock.
type Driver struct {
	mu      sync.Mutex
	w       Writer
	cfg     Config
	message string // the submission's message: the input of its first turn

	closed bool
	thread string // the thread, once started or resumed
	turn   string // the running turn, "" between turns
	// asked: the turn/start of the message was answered, with its turn id.
	asked bool
	// ended are the turns that completed, so that a late turn/start
	// answer does not make one running again.
	ended map[string]bool
	// stopping: Interrupt was called; stdin closes at the turn's end.
	stopping bool
	steers   map[string]*steer
	order    []string // the steered messages' ids, oldest first
	// requests are the app-server's requests that wait for an answer of a
	// person, by their key (idKey).
	requests map[string]*request
	// files summarizes the fileChange items of the running turn, by item
	// id, for the approval request that names one.
	files map[string]string
}

// New returns a driver writing on w. Start begins the conversation.
func New(cfg Config, w Writer) *Driver {
	return &Driver{w: w, cfg: cfg, ended: map[string]bool{}, steers: map[string]*steer{},
		requests: map[string]*request{}, files: map[string]string{}}
}

// Start writes initialize; Line carries on from its answer: thread/start
// or thread/resume, then turn/start of message, the submission's.
func (d *Driver) Start(message string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.message = message
	d.send(MethodInitialize, TagMessage, initializeParams{
		ClientInfo:   clientInfo{Name: "subdash", Version: d.cfg.Version},
		Capabilities: capabilities{OptOut: quietNotifications},
	})
}

// Line reads one line of the app-server's stdout, answers it where the
// protocol asks (the next request of the start, a turn's end), and returns
// what the engine must know of it, oldest first; nil for most lines.
// line is not retained.
func (d *Driver) Line(line []byte) []Event {
	m, ok := Decode(line)
	if !ok {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case m.IsResponse():
		return d.response(m)
	case m.IsRequest():
		return d.request(m, line)
	}
	return d.notification(m)
}

// response handles the answer to a request of ours.
func (d *Driver) response(m Message) []Event {
	method, tag := m.Request()
	switch method {
	case MethodInitialize:
		if m.Error != nil {
			d.closeLocked() // the transcript says why: the refusal ends the run
			return nil
		}
		d.notify(MethodInitialized)
		d.openThread(d.cfg.ThreadID)
	case MethodThreadResume:
		if m.Error != nil {
			d.openThread("") // a thread of its own: the transcript says why
			return nil
		}
		d.threadOpened(m)
	case MethodThreadStart:
		if m.Error != nil {
			d.closeLocked()
			return nil
		}
		d.threadOpened(m)
	case MethodTurnStart:
		if id := SteerOf(tag); id != "" {
			return d.steerStarted(id, m)
		}
		if m.Error != nil {
			d.closeLocked()
			return nil
		}
		var r TurnResult
		m.Body(&r)
		d.asked = true
		d.turnRuns(r.Turn)
		return d.sendWaiting()
	case MethodTurnSteer:
		return d.steerAnswered(SteerOf(tag), m)
	case MethodTurnInterrupt:
		if m.Error != nil && d.stopping {
			d.closeLocked() // no turn to end: the app-server ends with its input
		}
	}
	return nil
}

// openThread resumes thread, or starts a new one when thread is "".
func (d *Driver) openThread(thread string) {
	p := threadParams{ThreadID: thread, ApprovalPolicy: "never"}
	if d.cfg.Approvals {
		p.ApprovalPolicy = "untrusted"
	}
	if thread == "" {
		d.send(MethodThreadStart, TagMessage, p)
		return
	}
	p.ExcludeTurns = true // its history stays with codex; subdash needs none of it
	d.send(MethodThreadResume, TagMessage, p)
}

// threadOpened takes the thread of a thread/start or thread/resume answer
// and starts the turn of the message.
func (d *Driver) threadOpened(m Message) {
	var r ThreadResult
	m.Body(&r)
	d.thread = r.Thread.ID
	if d.stopping {
		d.closeLocked() // stopped before its turn began: nothing to run
		return
	}
	d.send(MethodTurnStart, TagMessage, turnParams{ThreadID: d.thread,
		Input: text(d.message), ClientUserMessageID: d.cfg.MessageID})
}

// turnRuns records turn as the running one, unless it ended already.
func (d *Driver) turnRuns(t Turn) {
	if t.ID != "" && !d.ended[t.ID] && (t.Status == "" || t.Status == TurnInProgress) {
		d.turn = t.ID
	}
}

// notification handles a notification.
func (d *Driver) notification(m Message) []Event {
	switch m.Method {
	case MethodTurnStarted:
		var n TurnNotification
		m.Body(&n)
		d.turnRuns(n.Turn)
	case MethodItemStarted:
		var n ItemNotification
		m.Body(&n)
		switch n.Item.Type {
		case ItemUserMessage:
			return d.steerSeen(n.Item.ClientID, n.TurnID)
		case ItemFileChange:
			d.files[n.Item.ID] = FileChangeSummary(n.Item.Changes)
		}
	case MethodTurnCompleted:
		var n TurnNotification
		m.Body(&n)
		d.ended[n.Turn.ID] = true
		if d.turn == n.Turn.ID {
			d.turn = ""
		}
		clear(d.files)
		if d.stopping {
			d.closeLocked() // the stop's turn ended: the app-server ends with its input
			return nil
		}
		return d.steerMissed(n.Turn.ID)
	case MethodRequestResolved:
		var n ResolvedNotification
		m.Body(&n)
		key := idKey(n.RequestID)
		if _, ok := d.requests[key]; ok {
			delete(d.requests, key)
			return []Event{{Kind: EventWithdrawn, RequestID: key}}
		}
	}
	return nil
}

// Interrupt stops the submission (SPEC §4): a running turn gets
// turn/interrupt, and stdin closes once it ended (codex then starts no
// model call, and ends the turn's commands as it exits); without one
// stdin closes now. Steering is refused from now on. It reports false
// when stdin had closed already (the app-server is ending by itself).
func (d *Driver) Interrupt() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.stopping = true
	if d.turn != "" && d.send(MethodTurnInterrupt, TagStop, interruptParams{ThreadID: d.thread, TurnID: d.turn}) {
		return true
	}
	d.closeLocked()
	return true
}

// Idle reports whether nothing is left for the app-server to do: no turn
// runs, none is asked for, and no steered message waits. The engine then
// closes stdin.
func (d *Driver) Idle() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return true
	}
	if d.turn != "" || !d.asked {
		return false
	}
	for _, st := range d.steers {
		if st.outstanding() {
			return false
		}
	}
	return true
}

// closeLocked closes stdin.
func (d *Driver) closeLocked() {
	if !d.closed {
		d.closed = true
		d.w.Close()
	}
}

// send writes request method with tag and params; false when stdin closed.
func (d *Driver) send(method, tag string, params any) bool {
	if d.closed {
		return false
	}
	return d.w.Write(line(map[string]any{"id": RequestID(method, tag), "method": method, "params": params}))
}

// notify writes notification method.
func (d *Driver) notify(method string) {
	if !d.closed {
		d.w.Write(line(map[string]any{"method": method}))
	}
}

// respond writes the answer to the app-server's request id.
func (d *Driver) respond(id json.RawMessage, result any) {
	if !d.closed {
		d.w.Write(line(map[string]any{"id": id, "result": result}))
	}
}

// refuse writes an error answer to the app-server's request id.
func (d *Driver) refuse(id json.RawMessage, code int, msg string) {
	if !d.closed {
		d.w.Write(line(map[string]any{"id": id, "error": RPCError{Code: code, Message: msg}}))
	}
}

// line is v as one JSON line.
func line(v any) []byte {
	b, _ := json.Marshal(v) // strings, the shapes above and JSON the app-server wrote: always encode
	return append(b, '\n')
}

// text is s as the input of a user message.
func text(s string) []UserInput { return []UserInput{{Type: "text", Text: s}} }

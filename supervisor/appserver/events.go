package appserver

// EventKind says what an Event tells the engine.
type EventKind int

// The events of Driver.Line.
const (
	// EventTaken: the steered message MessageID was taken: Folded into
	// the turn that ran when it was sent, else as a turn of its own
	// (SPEC §11's receipts folded and next_turn).
	EventTaken EventKind = iota + 1
	// EventUndelivered: the steered message MessageID cannot reach the
	// agent; Text says why.
	EventUndelivered
	// EventApproval: the request RequestID (Method, Line) waits for a
	// person's answer (Driver.Answer); Files summarizes the file change it
	// is about, when it is one.
	EventApproval
	// EventWithdrawn: the app-server withdrew the pending request
	// RequestID (its turn ended).
	EventWithdrawn
	// EventDeclined: the request RequestID (Method, Line) was answered at
	// once, as Text says: declined without --approvals, or refused as a
	// request subdash does not answer.
	EventDeclined
)

// Event is what the engine must know of a line of the app-server.
type Event struct {
	Kind      EventKind
	MessageID string // EventTaken, EventUndelivered
	Folded    bool   // EventTaken
	RequestID string // EventApproval, EventWithdrawn, EventDeclined: the request's key
	Method    string // EventApproval, EventDeclined
	Files     string // EventApproval
	Line      []byte // EventApproval, EventDeclined: the request as it came (a copy)
	Text      string // EventUndelivered, EventDeclined
}

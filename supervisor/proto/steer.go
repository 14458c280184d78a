package proto

import "fmt"

// The receipts of a steered message (SPEC §11 steer): what became of a
// message written into a running agent that takes messages while it runs.
const (
	// ReceiptPending: written, the agent has not said it took it yet.
	ReceiptPending = "pending"
	// ReceiptFolded: the running turn took it (claude: at the next tool
	// boundary; the built-in agent: between two files).
	ReceiptFolded = "folded"
	// ReceiptNextTurn: it ran as a turn of its own in the same submission.
	ReceiptNextTurn = "next_turn"
	// ReceiptNotDelivered: the submission ended, or its stdin closed,
	// before the agent took it; Note says what became of it (queued as the
	// next submission's message, kept after an interrupt, dropped by a
	// close).
	ReceiptNotDelivered = "not_delivered"
)

// SteeredMessage is one steered message and its receipt (Summary's
// steered_messages). Message is its head, cut as LastMessage in JSON;
// TakenAt is zero while pending.
type SteeredMessage struct {
	ID            string `json:"id"`             // the message id SendResult.MessageID gave
	SubmissionSeq int    `json:"submission_seq"` // the submission it was steered into, 1-based
	Message       string `json:"message"`
	Receipt       string `json:"receipt"` // ReceiptPending, ReceiptFolded, ReceiptNextTurn or ReceiptNotDelivered
	SentAt        Time   `json:"sent_at"`
	TakenAt       Time   `json:"taken_at,omitzero"`
	Note          string `json:"note,omitempty"` // with ReceiptNotDelivered: what became of it
}

// ErrCannotSteer is steer's error for an agent that reads its message
// once (a plain command, memo, gemini, codex exec; SPEC §11).
func ErrCannotSteer(id string) *Error {
	return &Error{CodeNoSteer, fmt.Sprintf("agent %s cannot be steered: it reads its message once; queue it (--queue) or interrupt it (--interrupt)", id)}
}

// Package steer keeps the steered messages of one submission and their
// receipts (SPEC §11 steer): a message written into the stdin of an agent
// that takes messages while it runs is pending until the agent says it
// took it, folded into the running turn or run as a turn of its own in
// the same process (next_turn); one still pending when the submission
// ends, or written after its stdin closed, is not delivered. The engine
// holds a Book per submission under its own lock; Book has none.
package steer

import (
	"encoding/json"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// Book is the steered messages of one submission, in the order written,
// and what its agent said of its turns so far. The zero Book is ready.
// Not safe for concurrent use: the caller holds its lock.
type Book struct {
	msgs    []*entry
	results int  // final results of turns seen (claude: result lines)
	closed  bool // stdin is closing: nothing more can be written
}

type entry struct {
	m proto.SteeredMessage
	// results is Book.results when the message was written: an echo
	// after a later result means the message ran as a turn of its own.
	results int
}

// Add records message id (its head, of submission seq) as written now.
// It reports false, recording nothing, once stdin is closing (Close): the
// message cannot reach the agent then.
func (b *Book) Add(id string, seq int, head string, now time.Time) bool {
	if b.closed {
		return false
	}
	b.msgs = append(b.msgs, &entry{m: proto.SteeredMessage{ID: id, SubmissionSeq: seq, Message: head,
		Receipt: proto.ReceiptPending, SentAt: proto.Time{Time: now}}, results: b.results})
	return true
}

// Echo records that the agent echoed message id back as it took it (claude
// --replay-user-messages): folded when no turn ended since it was written,
// else next_turn (its echo comes with the next turn, after the previous
// result). It returns the message and true when id was pending.
func (b *Book) Echo(id string, now time.Time) (proto.SteeredMessage, bool) {
	e := b.find(id)
	if e == nil || e.m.Receipt != proto.ReceiptPending {
		return proto.SteeredMessage{}, false
	}
	r := proto.ReceiptFolded
	if b.results > e.results {
		r = proto.ReceiptNextTurn
	}
	return b.take(e, r, now), true
}

// Take records that the agent took message id with receipt r, as it said
// itself (the built-in agent names how), and returns it; false when id
// was not pending.
func (b *Book) Take(id, r string, now time.Time) (proto.SteeredMessage, bool) {
	e := b.find(id)
	if e == nil || e.m.Receipt != proto.ReceiptPending {
		return proto.SteeredMessage{}, false
	}
	return b.take(e, r, now), true
}

func (b *Book) take(e *entry, r string, now time.Time) proto.SteeredMessage {
	e.m.Receipt, e.m.TakenAt = r, proto.Time{Time: now}
	return e.m
}

func (b *Book) find(id string) *entry {
	for _, e := range b.msgs {
		if e.m.ID == id {
			return e
		}
	}
	return nil
}

// Result records the final result of a turn and reports whether stdin may
// close now: no steered message is pending (SPEC §8: claude waits for more
// input after a result and ends at end of input). A message still pending
// that was written two results ago or more had a turn of its own without
// an echo: it is next_turn by the count of results, returned in taken.
func (b *Book) Result(now time.Time) (closeNow bool, taken []proto.SteeredMessage) {
	b.results++
	closeNow = true
	for _, e := range b.msgs {
		if e.m.Receipt != proto.ReceiptPending {
			continue
		}
		if b.results-e.results >= 2 {
			e.m.Note = "taken as a turn of its own: no echo came, the count of results says so"
			taken = append(taken, b.take(e, proto.ReceiptNextTurn, now))
			continue
		}
		closeNow = false
	}
	return closeNow, taken
}

// Results is the number of turn results seen.
func (b *Book) Results() int { return b.results }

// Close records that stdin is closing: Add refuses from now on.
func (b *Book) Close() { b.closed = true }

// Closed reports whether stdin is closing.
func (b *Book) Closed() bool { return b.closed }

// End marks every message still pending not_delivered with note (why,
// and what became of it), closes the book and returns them, oldest first.
func (b *Book) End(note string, now time.Time) []proto.SteeredMessage {
	b.closed = true
	var out []proto.SteeredMessage
	for _, e := range b.msgs {
		if e.m.Receipt == proto.ReceiptPending {
			e.m.Note = note
			out = append(out, b.take(e, proto.ReceiptNotDelivered, now))
		}
	}
	return out
}

// Pending reports whether a message waits for its receipt.
func (b *Book) Pending() bool {
	for _, e := range b.msgs {
		if e.m.Receipt == proto.ReceiptPending {
			return true
		}
	}
	return false
}

// Messages returns copies of the messages, oldest first; nil when none.
func (b *Book) Messages() []proto.SteeredMessage {
	if len(b.msgs) == 0 {
		return nil
	}
	out := make([]proto.SteeredMessage, len(b.msgs))
	for i, e := range b.msgs {
		out[i] = e.m
	}
	return out
}

// Restore puts messages of a record back (SPEC §10), as they were.
func (b *Book) Restore(ms []proto.SteeredMessage) {
	for _, m := range ms {
		b.msgs = append(b.msgs, &entry{m: m})
	}
	b.closed = true
}

// SetNote sets the note of message id (what became of a message not
// delivered: queued as the next submission's, dropped by a close).
func (b *Book) SetNote(id, note string) {
	if e := b.find(id); e != nil {
		e.m.Note = note
	}
}

// UserLine is message text as one stream-json user message, with its
// newline, as claude takes it on stdin (--input-format stream-json) and
// the built-in agent too: {"type":"user","message":{"role":"user",
// "content":[{"type":"text","text":…}]},"parent_tool_use_id":null,
// "session_id":…,"uuid":…}. uuid is the message's id, which claude's
// --replay-user-messages echo carries back ("" lets the CLI make one).
func UserLine(text, sessionID, uuid string) []byte {
	v := map[string]any{"type": "user",
		"message":            map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}},
		"parent_tool_use_id": nil, "session_id": sessionID}
	if uuid != "" {
		v["uuid"] = uuid
	}
	b, _ := json.Marshal(v) // strings and maps only: never fails
	return append(b, '\n')
}

// Missed records m, a message that never reached the agent (its stdin had
// closed), with its receipt already not_delivered.
func (b *Book) Missed(m proto.SteeredMessage) { b.msgs = append(b.msgs, &entry{m: m}) }

package mailbox

import (
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Record is the item as the journal keeps it.
func (it *Item) Record() *journal.MailRecord {
	r := &journal.MailRecord{Seq: it.Seq, Queued: it.Queued, From: it.From, At: proto.Time{Time: it.At},
		Message: it.Head, MessageBytes: it.Size, MessageFile: it.File}
	if e := it.End; e != nil {
		r.EndOf, r.EndPath, r.EndStatus, r.Detail = e.AgentID, e.Path, e.Status, e.Detail
	}
	return r
}

// ItemOf is the item a restored record keeps: its message in its file, or
// its head when it names no file (the head is the whole message then).
func ItemOf(r journal.MailRecord) *Item {
	it := &Item{Seq: r.Seq, Queued: r.Queued, From: r.From, At: r.At.Time,
		File: r.MessageFile, Head: r.Message, Size: r.MessageBytes}
	if r.MessageFile == "" {
		it.Text, it.Size = r.Message, len(r.Message)
	}
	if r.EndOf != "" {
		it.End = &End{AgentID: r.EndOf, Path: r.EndPath, Status: r.EndStatus, Detail: r.Detail}
		it.SetText(proto.FormatEnd(r.EndPath, r.EndStatus, r.Detail))
	}
	return it
}

// Records returns the items as the journal keeps them, those handed over
// first, then the others, each oldest first; nil when none.
func (b *Box) Records() []journal.MailRecord {
	var out []journal.MailRecord
	for _, it := range b.handed {
		out = append(out, *it.Record())
	}
	for _, it := range b.items {
		out = append(out, *it.Record())
	}
	return out
}

// Owner names a mailbox in the journal: an agent's (AgentID), or a
// session's root mailbox (Session, AgentID "").
type Owner struct {
	AgentID, Session string
}

// Put is the event of it put into the mailbox ("mail").
func (o Owner) Put(it *Item) journal.Event {
	return o.event(journal.Event{Event: "mail", Mail: it.Record()})
}

// Removed is the event of the items seqs dropped or cancelled
// ("mail_removed"), note saying by what.
func (o Owner) Removed(seqs []uint64, note string) journal.Event {
	return o.event(journal.Event{Event: "mail_removed", Seqs: seqs, Note: note})
}

// Taken is the event of the items seqs acknowledged by a wait
// ("mail_taken").
func (o Owner) Taken(seqs []uint64) journal.Event {
	return o.event(journal.Event{Event: "mail_taken", Seqs: seqs, Note: "acknowledged by a wait"})
}

// Kept is the event of queued messages that could not start the next
// submission ("mail_kept"): they stay, and why is err.
func (o Owner) Kept(err error) journal.Event {
	return o.event(journal.Event{Event: "mail_kept", Note: "the queued messages were not started: " + err.Error()})
}

func (o Owner) event(ev journal.Event) journal.Event {
	if o.AgentID != "" {
		ev.AgentID = o.AgentID
	} else {
		ev.Session = o.Session
	}
	return ev
}

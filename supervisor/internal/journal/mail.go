package journal

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Mailboxes in the replay (SPEC §11, §14): an agent's mailbox is part of
// its record (AgentRecord.Mailbox), a session's root mailbox has a record
// of its own (MailboxRecord, event "mailbox" in a checkpoint). "mail"
// puts an item in, "mail_removed" (cancel, close), "mail_taken" (a wait)
// and the Seqs of spawned and sent (a submission took them) take items
// out.

// sessionEvent applies an event of a session's root mailbox, and reports
// whether ev was one.
func (rp *replay) sessionEvent(ev Event) bool {
	switch {
	case ev.Event == "mailbox" && ev.Mailbox != nil:
		if ev.Mailbox.Dir != "" && ev.Mailbox.Dir != rp.dir {
			return true
		}
		mb := *ev.Mailbox
		mb.Items = slices.Clone(mb.Items)
		rp.sessions[mb.Session] = &mb
		for _, it := range mb.Items {
			rp.maxSeq = max(rp.maxSeq, it.Seq)
		}
		return true
	case ev.AgentID != "" || ev.Session == "":
		return false
	}
	mb := rp.session(ev.Session)
	switch ev.Event {
	case "mail":
		if ev.Mail != nil {
			mb.Items = append(mb.Items, *ev.Mail)
			rp.maxSeq = max(rp.maxSeq, ev.Mail.Seq)
		}
	case "mail_removed", "mail_taken":
		mb.Items = removeSeqs(mb.Items, ev.Seqs)
	}
	return true
}

// session returns the root mailbox of session, made empty when new.
func (rp *replay) session(session string) *MailboxRecord {
	mb, ok := rp.sessions[session]
	if !ok {
		mb = &MailboxRecord{Session: session, Dir: rp.dir}
		rp.sessions[session] = mb
	}
	return mb
}

// mail applies a mail or mail_removed event of agent r's mailbox.
func (rp *replay) mail(r *AgentRecord, ev Event) {
	switch {
	case ev.Event == "mail" && ev.Mail != nil:
		r.Mailbox = append(r.Mailbox, *ev.Mail)
		rp.maxSeq = max(rp.maxSeq, ev.Mail.Seq)
	case ev.Event == "mail_removed":
		r.Mailbox = removeSeqs(r.Mailbox, ev.Seqs)
	}
}

// removeSeqs returns items without those numbered seqs.
func removeSeqs(items []MailRecord, seqs []uint64) []MailRecord {
	if len(seqs) == 0 {
		return items
	}
	return slices.DeleteFunc(items, func(it MailRecord) bool { return slices.Contains(seqs, it.Seq) })
}

// endedByHost puts into the mailbox of r's parent (its parent agent, or
// its session's root mailbox) the item that says r's submission was
// interrupted by its host's end (SPEC §14: Memo's interrupted is not
// final, so an orchestrator would otherwise wait out its timeout), and
// returns a note when messages were queued for r: they were not run, and
// wait for its next submission.
func (rp *replay) endedByHost(r *AgentRecord, at time.Time) string {
	detail := interruptedByHostEnd
	item := MailRecord{EndOf: r.AgentID, EndPath: r.AgentPath, EndStatus: proto.TreeInterrupted, Detail: detail,
		Message: proto.FormatEnd(r.AgentPath, proto.TreeInterrupted, detail)}
	item.MessageBytes = len(item.Message)
	item.At = proto.Time{Time: at}
	switch parent := rp.byID[r.ParentID]; {
	case r.AgentPath == "":
		// a record of a subdash before the tree: nobody waits on it
	case parent != nil && parent.Status != proto.StatusClosed:
		rp.maxSeq++
		item.Seq = rp.maxSeq
		changed(parent)
		parent.Mailbox = append(parent.Mailbox, item)
	case r.ParentID == "" && r.Session != "":
		rp.maxSeq++
		item.Seq = rp.maxSeq
		mb := rp.session(r.Session)
		mb.Items = append(mb.Items, item)
	}
	n := 0
	for _, it := range r.Mailbox {
		if it.Queued {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("agent %s had %d message(s) queued when its host ended; they were not run and wait for its next submission (u cancels the last)", termtext.ShortID(r.AgentID), n)
}

// mailboxes returns the root mailboxes that hold items, by session.
func (rp *replay) mailboxes() []*MailboxRecord {
	var out []*MailboxRecord
	for _, mb := range rp.sessions {
		if len(mb.Items) > 0 {
			out = append(out, mb)
		}
	}
	slices.SortFunc(out, func(a, b *MailboxRecord) int { return strings.Compare(a.Session, b.Session) })
	return out
}

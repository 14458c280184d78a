package journal

import (
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestKilledHostEndsChildrenIntoTheirParentsMailboxes: a host killed while
// a session's child and an agent's child ran (no end journaled) leaves
// each parent an item saying the child was interrupted by the host's end,
// numbered after the items seen; the queued messages of a child stay in
// its mailbox, and a note says they were not run.
func TestKilledHostEndsChildrenIntoTheirParentsMailboxes(t *testing.T) {
	at := proto.Time{Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	later := at.Add(time.Minute)
	evs := []Event{
		{Time: at, Event: "spawned", AgentID: "aaaaaaaa-1", Seq: 1, SubmissionID: "s1", Message: "lead", AgentPath: "/root/lead", Session: "sess"},
		{Time: at, Event: "spawned", AgentID: "bbbbbbbb-2", Seq: 1, SubmissionID: "s2", Message: "work", AgentPath: "/root/lead/w", ParentID: "aaaaaaaa-1"},
		{Time: at, Event: "mail", AgentID: "bbbbbbbb-2", Mail: &MailRecord{Seq: 7, Queued: true, Message: "next", MessageBytes: 4}},
		{Time: at, Event: "mail", Session: "sess", Mail: &MailRecord{Seq: 3, Message: "hi", MessageBytes: 2}},
	}
	rp := newReplay("/work")
	notes := rp.replayRuns([]*runJournal{{events: evs, last: later}})
	if len(notes) != 1 || notes[0] != "agent bbbbbbbb had 1 message(s) queued when its host ended; they were not run and wait for its next submission (u cancels the last)" {
		t.Fatalf("notes %q", notes)
	}
	lead, w := rp.byID["aaaaaaaa-1"], rp.byID["bbbbbbbb-2"]
	if len(w.Mailbox) != 1 || w.Mailbox[0].Message != "next" {
		t.Fatalf("the child's mailbox: %+v", w.Mailbox)
	}
	wantEnd := func(path string) string {
		return proto.FormatEnd(path, proto.TreeInterrupted, "interrupted (host ended)")
	}
	if len(lead.Mailbox) != 1 || lead.Mailbox[0].Message != wantEnd("/root/lead/w") || lead.Mailbox[0].Seq <= 7 {
		t.Fatalf("the lead's mailbox: %+v", lead.Mailbox)
	}
	mbs := rp.mailboxes()
	if len(mbs) != 1 || mbs[0].Session != "sess" || len(mbs[0].Items) != 2 || mbs[0].Items[1].Message != wantEnd("/root/lead") {
		t.Fatalf("the session's mailbox: %+v", mbs)
	}
}

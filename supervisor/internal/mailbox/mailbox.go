// Package mailbox holds the mailboxes of the multi-agent family (SPEC §11,
// §14): an agent's, and the root mailbox of each `subdash mcp --tools
// multi-agent` session, so that two orchestrators on one host never take
// each other's items.
//
// An agent's mailbox holds, in the order they came, the messages held or
// queued for its next submission and the ends of its children that it has
// not taken yet. A queued message (Queue, followup_task of a running
// agent) starts that next submission as soon as the running one ends by
// itself; a held one (send_message) waits for it. The next submission
// takes every item, each item's text a part of its message before its
// own. Interrupt keeps the mailbox, as Memo keeps its own; close drops it
// and says so. The end of a child (completed, errored, or interrupted or
// closed by someone but its parent) becomes an item of its parent's
// mailbox: its parent agent's, or, for a child of the root, that of the
// session that spawned it. A wait hands the items over and keeps them
// until the next wait acknowledges them by number, so an answer lost on
// the way loses nothing.
//
// Every item is journaled until it is taken (Owner's events), a message
// with its whole text in a file of the run (File), so a later host
// restores it (ItemOf). A Box is not safe for concurrent use: the engine's
// lock guards every mailbox.
package mailbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Item is one item of a mailbox: a message held or queued for the next
// submission, or the end of a child.
type Item struct {
	// Seq numbers the items of every mailbox of a host, in order; a wait
	// acknowledges items by it.
	Seq uint64
	// Queued: a queued message, which starts the next submission when the
	// running one ends by itself; false: held until then (or an end).
	Queued bool
	From   string    // the sender's agent path, "" for a person or program
	At     time.Time // when it came
	// The message, as the next submission takes it: its whole text is in
	// File, Size bytes, whose first bytes (journal.MessageHead) Head
	// holds; or, with File "", Text holds it whole (an end, or a message
	// whose file is gone and whose head was the whole message).
	File string
	Head string
	Size int
	Text string
	// End is set for the end of a child (SPEC §14), whose text Text holds
	// as Memo hands it to its model; nil for a message.
	End *End
}

// End is what an item says of a child that ended, or that a person
// interrupted or closed.
type End struct {
	AgentID, Path string
	Status        string // the multi-agent family's word (proto.TreeStatus)
	Detail        string // its last answer or error
}

// File is the file of the message of item seq in dir: mail-<seq>.msg.
func File(dir string, seq uint64) string {
	return filepath.Join(dir, "mail-"+strconv.FormatUint(seq, 10)+".msg")
}

// SetText makes text the item's whole message, in memory.
func (it *Item) SetText(text string) {
	it.File, it.Text, it.Head, it.Size = "", text, journal.MessageHead(text), len(text)
}

// NewEnd returns the item that says how the child end names ended, from
// its path, at at, numbered seq.
func NewEnd(seq uint64, at time.Time, end End) *Item {
	it := &Item{Seq: seq, From: end.Path, At: at, End: &end}
	it.SetText(proto.FormatEnd(end.Path, end.Status, end.Detail))
	return it
}

// Discard removes the item's message file, if any.
func (it *Item) Discard() {
	if it.File != "" {
		_ = os.Remove(it.File)
	}
}

// Adopt moves the message file of a restored item into dir, a folder of
// this run (the run that wrote it may be removed by --log-retention). A
// file that cannot be moved stays where it is; one that is gone leaves
// the head, which is the whole message when it was not cut.
func (it *Item) Adopt(dir string) {
	if it.File == "" || filepath.Dir(it.File) == dir {
		return
	}
	to := filepath.Join(dir, filepath.Base(it.File))
	if err := os.MkdirAll(dir, 0o700); err == nil {
		if err = os.Rename(it.File, to); err == nil {
			it.File = to
			return
		}
	}
	if _, err := os.Stat(it.File); err != nil {
		it.File, it.Text, it.Size = "", it.Head, len(it.Head)
	}
}

// Answer is the item as a wait hands it over to the owner of the mailbox,
// whose agent path is to (proto.RootPath for a session's): an end as
// Memo's completion text, a message as Memo's agent_message (its head,
// with the file that holds it whole when the head is cut).
func (it *Item) Answer(to string) proto.MailItem {
	out := proto.MailItem{Seq: it.Seq, From: it.From, Text: it.Head}
	if e := it.End; e != nil {
		out.EndOf, out.Path, out.Status = e.AgentID, e.Path, e.Status
		out.Text = proto.FormatEnd(e.Path, e.Status, e.Detail)
		return out
	}
	text := it.Head
	if it.File != "" && proto.MessageCut(text) {
		text += " (the whole message is in " + it.File + ")"
	}
	out.Text = proto.FormatMessage(it.From, to, text)
	return out
}

// Box is one mailbox. Its zero value is an empty mailbox.
type Box struct {
	items  []*Item // not handed over yet, oldest first
	handed []*Item // handed over by a wait, not acknowledged yet
}

// Put adds it as the newest item.
func (b *Box) Put(it *Item) { b.items = append(b.items, it) }

// Items returns the items not handed over, oldest first: what the next
// submission takes. The mailbox owns the slice.
func (b *Box) Items() []*Item { return b.items }

// Empty reports whether the mailbox holds no item, handed over or not.
func (b *Box) Empty() bool { return len(b.items)+len(b.handed) == 0 }

// Len returns how many items it holds, handed over or not.
func (b *Box) Len() int { return len(b.items) + len(b.handed) }

// HasQueued reports whether a queued message is among the items not
// handed over.
func (b *Box) HasQueued() bool {
	return slices.ContainsFunc(b.items, func(it *Item) bool { return it.Queued })
}

// Messages returns the heads of the messages among the items not handed
// over, oldest first (Summary.QueuedMessages); nil when none.
func (b *Box) Messages() []string {
	var out []string
	for _, it := range b.items {
		if it.End == nil {
			out = append(out, it.Head)
		}
	}
	return out
}

// CancelLast takes the newest message out (SPEC §11 cancel-queue) and
// returns it, its file still there; nil when no message is held.
func (b *Box) CancelLast() *Item {
	for i := len(b.items) - 1; i >= 0; i-- {
		if it := b.items[i]; it.End == nil {
			b.items = slices.Delete(b.items, i, i+1)
			return it
		}
	}
	return nil
}

// Clear empties the items not handed over, once a submission took them
// (Items): their files are the submission's now.
func (b *Box) Clear() { b.items = nil }

// Drop empties the items not handed over (close, SPEC §11), removing
// their files, and returns their numbers and whether any was a message.
func (b *Box) Drop() (seqs []uint64, messages bool) {
	for _, it := range b.items {
		seqs = append(seqs, it.Seq)
		messages = messages || it.End == nil
		it.Discard()
	}
	b.items = nil
	return seqs, messages
}

// DropAll empties the mailbox, handed over items too, removing their
// files (forget).
func (b *Box) DropAll() {
	b.Drop()
	for _, it := range b.handed {
		it.Discard()
	}
	b.handed = nil
}

// HandOver moves the items to those handed over and returns all of these,
// oldest first: those an earlier wait handed over come again, as that
// answer may have been lost. The mailbox owns the slice.
func (b *Box) HandOver() []*Item {
	b.handed = append(b.handed, b.items...)
	b.items = nil
	return b.handed
}

// Ack takes the handed over items numbered up to ack out for good,
// removing their files, and returns their numbers.
func (b *Box) Ack(ack uint64) []uint64 {
	var gone []uint64
	b.handed = slices.DeleteFunc(b.handed, func(it *Item) bool {
		if it.Seq > ack {
			return false
		}
		gone = append(gone, it.Seq)
		it.Discard()
		return true
	})
	return gone
}

package agenttable

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/ui/internal/cells"
)

// Frames are the spinner frames of a running agent.
var Frames = spinner.MiniDot.Frames

// Status symbols; running uses a spinner frame in the table.
const (
	SymRunning   = "●"
	SymCompleted = "✓"
	SymErrored   = "✗"
	SymClosed    = "■"
	SymStopping  = "◌"
)

// Symbol returns the symbol of a status.
func Symbol(s proto.Status) string {
	switch s {
	case proto.StatusRunning:
		return SymRunning
	case proto.StatusCompleted:
		return SymCompleted
	case proto.StatusErrored:
		return SymErrored
	case proto.StatusClosed:
		return SymClosed
	}
	return "?"
}

// Reason returns the short reason an errored submission ended: "exit 2",
// "interrupted", "SIGKILL", "timed out", "no result", or its error text.
func Reason(sub proto.SubmissionInfo) string {
	le := ""
	if sub.LastError != nil {
		le = *sub.LastError
	}
	switch {
	case le == "interrupted":
		return le
	case strings.HasPrefix(le, "timed out"):
		return "timed out"
	case sub.Signal != "":
		return sub.Signal
	case sub.ExitCode != nil && *sub.ExitCode != 0:
		return fmt.Sprintf("exit %d", *sub.ExitCode)
	case le == "ended without a result":
		return "no result"
	}
	return termtext.OneLine(le, 0)
}

// SubmissionText returns how submission sub went, as a symbol and a word:
// "● running", "◌ stopping", "✓ completed", "✗ interrupted" or "✗ errored
// (exit 2)". stopping says the dashboard asked for a stop that the snapshot
// may not show yet.
func SubmissionText(sub proto.SubmissionInfo, stopping bool) string {
	running := sub.EndedAt.IsZero()
	switch {
	case running && (sub.Stopping || stopping):
		return SymStopping + " stopping"
	case running:
		return SymRunning + " running"
	case sub.Status == proto.StatusErrored:
		switch r := Reason(sub); r {
		case "interrupted":
			return SymErrored + " interrupted"
		case "":
			return SymErrored + " errored"
		default:
			return SymErrored + " errored (" + r + ")"
		}
	}
	return Symbol(sub.Status) + " " + string(sub.Status)
}

// Row is what the table shows of one agent; the table builds it (RowOf)
// only for the rows on screen.
type Row struct {
	ID          string
	Name        string // task name (SPEC §14), one clean line; "" when none
	Status      proto.Status
	Stopping    bool   // a stop was requested and the process group is not gone yet
	Reason      string // why the latest submission errored, in a word or two (Reason)
	Submissions int
	Elapsed     time.Duration
	Usage       string // the cost, else the tokens, of all its submissions (presets: UsageCell), "" when none reported
	// Message is what the agent is doing now, or how it ended, one clean
	// line (Summary.Now, NowOf): the NOW cell after its marks.
	Message string
	// Restored is set for an agent restored from an earlier run (SPEC
	// §10) that has run nothing since: the time column shows its Age
	// (since it was last updated) and the row is muted.
	Restored bool
	Age      time.Duration
	// Failing is set when subdash failed to write the agent's log file or
	// the journal (Summary.Failure, SPEC §5): NOW says so first.
	Failing  bool
	NeedsYou string // why the agent needs you (SPEC §11), "" when it does not
	Queued   string // the first message queued after its submission, one clean line; "" for none
	QueuedN  int    // how many messages are queued (SPEC §11, §14)
	// Receipt is the receipt of the latest steered message (SPEC §11
	// steer) in words, "" when none was steered into the latest
	// submission.
	Receipt string
	// Changes is what its latest submission changed in its work tree
	// (SPEC §15: "+12 −3", "±0", "±?" while it runs, "–" not tracked, "*"
	// when others ran there meanwhile); "" when not tracked at all.
	Changes string
	// Stalled is set while the agent's running submission is stalled
	// (Summary.StalledSince, SPEC §11 "Stalled"); StalledFor is how long
	// it has been.
	Stalled    bool
	StalledFor time.Duration
	// Budget is set when the agent spent its --max-budget-usd: no new
	// submission starts (Summary.BudgetReached, SPEC §11 "Budgets").
	Budget bool
	// Inner is set for an inner agent's row (inner.go): Name is its
	// description, the row is muted and counts no submissions.
	Inner bool
}

// RowOf builds the row of agent a at time now; stopping says the dashboard
// asked for a stop that the snapshot may not show yet.
func RowOf(a proto.AgentInfo, now time.Time, stopping bool) Row {
	r := Row{ID: a.AgentID, Status: a.Status, Stopping: a.Stopping || stopping && a.Running(), Submissions: len(a.Submissions)}
	if n := len(a.Submissions); n > 0 {
		last := a.Submissions[n-1]
		end := last.EndedAt
		if end.IsZero() {
			end = now
		}
		r.Elapsed = max(end.Sub(last.StartedAt), 0)
		if a.Status == proto.StatusErrored {
			r.Reason = Reason(last)
		}
	}
	r.Name = termtext.OneLine(cells.Head(a.TaskName, 256), 0)
	r.Message = NowOf(a, r.Reason)
	r.Usage = UsageCell(a.Usage)
	r.Changes = a.Changes.Short()
	r.Failing = strings.HasPrefix(a.Failure, "log file ") // the journal's failure is every agent's, said once below the table
	if a.Restored {
		r.Restored, r.Age = true, max(now.Sub(a.UpdatedAt.Time), 0)
	}
	if a.NeedsYou != nil {
		r.NeedsYou = a.NeedsYou.Reason
	}
	r.Budget = a.BudgetReached != ""
	if a.StalledSince != nil && a.Running() {
		r.Stalled, r.StalledFor = true, max(now.Sub(a.StalledSince.Time), 0)
	}
	r.QueuedN = max(len(a.QueuedMessages), min(len(a.QueuedMessage), 1))
	if a.QueuedMessage != "" {
		r.Queued, _ = cells.Cut(termtext.OneLine(cells.Head(a.QueuedMessage, 1024), 0), 200)
	}
	if n := len(a.SteeredMessages); n > 0 && len(a.Submissions) > 0 && a.SteeredMessages[n-1].SubmissionSeq == a.Submissions[len(a.Submissions)-1].Seq {
		r.Receipt = ReceiptWords(a.SteeredMessages[n-1].Receipt)
	}
	return r
}

// NowOf is what the NOW cell says of agent a, whose latest submission
// errored for reason (Reason; "" otherwise): the host's Summary.Now, one
// clean line. From a host without it (an older subdash, or nothing to
// say yet): what its agent CLI does while it runs ("→ thinking"), why it
// errored ("exit 2"), else its message.
func NowOf(a proto.AgentInfo, reason string) string {
	switch {
	case a.Now != "":
		return termtext.OneLine(a.Now, 0)
	case a.Activity != "" && a.Running():
		return "→ " + termtext.OneLine(a.Activity, 0)
	case reason != "":
		return reason
	}
	return termtext.OneLine(cells.Head(a.LastMessage, 1024), 0)
}

// Marks of SPEC §11 in the NOW column, a symbol and words so that
// NO_COLOR loses nothing; SymNeedsYou has a column of its own. SymQueued
// is U+25B8, one column in every width table and present in the common
// monospace fonts (U+23F5, used before, is missing from the font VHS
// renders with).
const (
	SymNeedsYou = "◆"
	SymQueued   = "▸"
	SymSteered  = "↪"
	SymStalled  = "⊘"
	SymBudget   = "$"
)

// ReceiptWords says a steered message's receipt (proto.Receipt*) as the
// row shows it: "pending", "folded", "next turn", "not delivered".
func ReceiptWords(r string) string { return strings.ReplaceAll(r, "_", " ") }

// MessageText is the NOW cell of r: its marks, then what the agent is
// doing now or how it ended. The marks: "✗ no log · " when its log file
// could not be written, "⊘ stalled 2m05s · " while it is stalled, "$
// budget reached · " once it spent its --max-budget-usd, "↪ steer folded
// · " for a steered message's receipt, "▸ queued: “…” · " when a message
// waits ("▸ 3 queued: “…” · " when several do, the first shown). Whether
// it needs you is the glyph column's (SymNeedsYou), not a mark here.
func MessageText(r Row) string {
	msg := r.Message
	switch {
	case r.Queued != "" && r.QueuedN > 1:
		msg = fmt.Sprintf("%s %d queued: “%s” · %s", SymQueued, r.QueuedN, r.Queued, msg)
	case r.Queued != "":
		msg = SymQueued + " queued: “" + r.Queued + "” · " + msg
	}
	if r.Receipt != "" {
		msg = SymSteered + " steer " + r.Receipt + " · " + msg
	}
	if r.Budget {
		msg = SymBudget + " budget reached · " + msg
	}
	if r.Stalled {
		msg = SymStalled + " stalled " + Elapsed(r.StalledFor) + " · " + msg
	}
	if r.Failing {
		msg = SymErrored + " no log · " + msg
	}
	return strings.TrimSuffix(msg, " · ")
}

// SymRestored marks the age of an agent restored from an earlier run.
const SymRestored = "↺"

// Age formats how long ago an agent restored from an earlier run was last
// updated, in at most six cells: "↺ 42s", "↺ 3m", "↺ 5h", "↺ 12d".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%s %ds", SymRestored, int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%s %dm", SymRestored, int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%s %dh", SymRestored, int(d/time.Hour))
	}
	return fmt.Sprintf("%s %dd", SymRestored, int(d/(24*time.Hour)))
}

// Usage formats the tokens and cost an agent CLI reported, e.g.
// "12.3k tok $0.0123"; "" when it reported none.
func Usage(u proto.Usage) string {
	var parts []string
	if n := u.InputTokens + u.OutputTokens; n > 0 {
		parts = append(parts, transcript.Tokens(n)+" tok")
	}
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	return strings.Join(parts, " ")
}

// UsageCell is the USAGE cell of u: the cost an agent CLI reported
// ("$0.1937"), else its tokens ("38.4k tok"); "" when it reported
// neither. Usage says both, where there is room (the status line, the
// log pane's title).
func UsageCell(u proto.Usage) string {
	switch {
	case u.CostUSD > 0:
		return fmt.Sprintf("$%.4f", u.CostUSD)
	case u.InputTokens+u.OutputTokens > 0:
		return transcript.Tokens(u.InputTokens+u.OutputTokens) + " tok"
	}
	return ""
}

// Elapsed formats a duration in at most six cells: 9s, 3m04s, 1h02m.
func Elapsed(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 100*3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	}
	return fmt.Sprintf("%dh", s/3600)
}

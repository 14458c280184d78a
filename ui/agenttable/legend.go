package agenttable

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/subdash/subdash/keymap"
)

// LegendEntry is a glyph the table (or the status line) can show, and what it
// means in words: the help overlay's legend (SPEC §7: `?` explains every
// symbol the screen can show).
type LegendEntry struct {
	Glyph, Words string
}

// Legend returns every symbol the table and the status line can show,
// statuses first, its words naming the keys of k. The caller owns the
// slice.
func Legend(k keymap.KeyMap) []LegendEntry {
	keyOf := func(b key.Binding) string { return b.Help().Key }
	return []LegendEntry{
		{strings.Join(Frames[:3], "") + " " + SymRunning, "running (the spinner turns while it runs)"},
		{SymCompleted, "completed"},
		{SymErrored, "errored: NOW says why (its CLI's error, its last stderr line, the exit status)"},
		{SymClosed, "closed: stopped and archived; " + keyOf(k.Resume) + " (resume) reopens it, running nothing"},
		{SymStopping, "stopping: its process group is being stopped"},
		{SymNeedsYou, "needs you: it ended, asks for approval or asks a question since you last selected it (" + keyOf(k.NextNeedsYou) + ": the next)"},
		{"›", "the selected row"},
		{"→", "the tool its agent CLI runs now, with its argument"},
		{SymStalled, "stalled: no output, no event and no CPU time for --stall-after"},
		{SymQueued, "queued: a message waits to run when the submission ends (" + keyOf(k.CancelQueue) + " cancels the last)"},
		{SymSteered, "steered: a message written into the running submission, and its receipt"},
		{SymBudget, "budget reached: its --max-budget-usd is spent; nothing new starts"},
		{SymErrored + " no log", "its log file could not be written (the help's notes say where)"},
		{"⚠", "in the status line: approvals that wait, or warnings (listed at the top of this help)"},
		{SymRestored, "restored from an earlier run; TIME is how long ago it last changed"},
		{SymSubtree, "USAGE of the agent and every agent below it"},
		{"±", "what its latest submission changed in its work tree: +added −removed lines (" + keyOf(k.Diff) + " shows the diff)"},
		{"±?", "changes not counted yet: it runs"},
		{"*", "after ±: other agents ran in the same work tree meanwhile"},
		{string(SparkLevels), "ACTIVITY: its output per 15 s over the last 2 minutes, ▁ none, █ 64 KiB or more"},
		{"├─ └─ │", "the tree: each agent under the agent that spawned it"},
		{"+3", "after a name: a fold hides 3 rows (" + keyOf(k.Fold) + ", or a click on it, unfolds)"},
		{SymInner, "an inner agent its agent CLI started (not an agent of subdash)"},
	}
}

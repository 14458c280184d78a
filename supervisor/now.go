package supervisor

import (
	"fmt"
	"strings"

	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// What an agent is doing now, or how it ended, in one line: Summary.Now
// (SPEC §7, the table's NOW column). It is made when a snapshot is taken,
// from state the output pipeline keeps anyway (the newest display lines,
// the transcript's parser), so a line of output costs nothing more; an
// ended submission's is made once, at its end or restore (endText).

// maxNow bounds Summary.Now, in runes.
const maxNow = transcript.MaxNowRunes

// nowLocked returns Summary.Now of agent a, whose pending approvals are
// pending and pending questions questions: what it asks while it waits for an answer; while it runs, its
// agent CLI's current tool and argument (transcript.Parser.Now), else its
// newest output line; a follow-up that waits for a slot, what it waits
// for; else how its latest submission ended (a.endNow). Call with s.mu
// held.
func (s *Supervisor) nowLocked(a *agent, pending []proto.PendingApproval, questions []proto.PendingQuestion) string {
	r := a.running
	switch {
	case r != nil && len(questions) > 0 && (len(pending) == 0 || questions[0].RequestedAt.Before(pending[0].RequestedAt.Time)):
		return termtext.OneLine(proto.QuestionActivity(questions[0]), maxNow)
	case r != nil && len(pending) > 0:
		return termtext.OneLine(proto.ApprovalActivity(pending[0]), maxNow)
	case r != nil && r.tr != nil:
		if now, events := r.tr.now(); events {
			return now
		}
		return r.out.LastLine(maxNow) // no JSON event: what the CLI printed instead
	case r != nil:
		return r.out.LastLine(maxNow)
	case a.pending:
		return fmt.Sprintf("waits for a free slot (--max-agents %d)", s.cfg.MaxAgents)
	}
	return a.endNow
}

// now returns what the agent CLI is doing now (transcript.Parser.Now),
// and whether its stdout held a JSON event yet.
func (t *transcriptState) now() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parser.Now(), t.events
}

// endText is the Summary.Now of an agent whose latest submission ended
// with status, lastError and lastOutput (SPEC §4), exit code and signal;
// structured says its preset writes a transcript, whose last_output is
// the answer. An errored one says why: its agent CLI's own error (claude's
// "API Error: 500 …"), its start failure or the stop's reason
// ("interrupted", with the output's last line), else the last line of
// stderr with text, else of stdout, then how the process ended ("exit
// 3", "SIGKILL"). A completed one says the first line of the answer of
// an agent CLI, else the last line of stdout with text, else of stderr.
func endText(status proto.Status, lastError, lastOutput string, code *int, sig string, structured bool) string {
	out, errOut := output.SplitLastOutput(lastOutput)
	last := func() string {
		if l := termtext.LastLine(errOut, maxNow); l != "" {
			return l
		}
		return termtext.LastLine(out, maxNow)
	}
	if status != proto.StatusErrored {
		if structured && errOut == "" {
			return termtext.FirstLine(out, maxNow)
		}
		if l := termtext.LastLine(out, maxNow); l != "" {
			return l
		}
		return termtext.LastLine(errOut, maxNow)
	}
	switch {
	case lastError == "interrupted" || strings.HasPrefix(lastError, "timed out"):
		return join(lastError, last())
	case lastError == noResultFailure:
		return join(last(), "ended without a result")
	case strings.HasPrefix(lastError, exitFailure), strings.HasPrefix(lastError, signalFailure), lastError == cliNoMessage:
		how := strings.TrimPrefix(lastError, signalFailure)
		if code != nil && *code != 0 {
			how = fmt.Sprintf("exit %d", *code)
		}
		if lastError == cliNoMessage {
			how = "the agent CLI gave no reason"
		}
		return termtext.OneLine(join(last(), how), maxNow)
	}
	return termtext.FirstLine(lastError, maxNow) // the CLI's own error, a start failure
}

// join joins the parts with text in them with " · ".
func join(parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " · ")
}

// endNowLocked sets a.endNow from a's latest submission, which ended.
// Call with s.mu held, or on an agent no one else holds yet (restore).
func endNowLocked(a *agent) {
	n := len(a.subs)
	if n == 0 {
		a.endNow = ""
		return
	}
	sub := a.subs[n-1]
	le, lo := "", ""
	if sub.lastError != nil {
		le = *sub.lastError
	}
	if a.lastOutput != nil {
		lo = *a.lastOutput
	}
	a.endNow = endText(sub.status, le, lo, sub.exitCode, sub.signal, a.preset.Structured())
}

package supervisor

import (
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Questions in the records (SPEC §10, §12 "Questions"): each submission's
// record keeps the question requests it made, with their answers and how
// each ended, and the journal's question events rebuild them after a host
// was killed. A restored submission keeps them as its approvals' ended
// requests, so a late answer is refused saying how the request ended, and
// its transcript, read back from the log (which holds only what the CLI
// wrote), shows each answer after its question again.

// questionRecordsLocked returns the question requests of sub as its
// record keeps them, oldest first; nil when it asked none. Call with s.mu
// held.
func questionRecordsLocked(sub *submission) []journal.QuestionRecord {
	if sub.appr == nil || len(sub.appr.asked) == 0 {
		return nil
	}
	out := make([]journal.QuestionRecord, len(sub.appr.asked))
	for i, r := range sub.appr.asked {
		out[i] = journal.QuestionRecord{RequestID: r.req.RequestID, Tool: r.req.Tool, Questions: r.questions,
			AskedAt: proto.Time{Time: r.at}, Answers: r.answers, Outcome: sub.appr.answered[r.req.RequestID]}
	}
	return out
}

// restoredApprovals returns the approval state of a restored submission
// whose record holds the question requests qs: every one ended (one the
// record still has pending ended with its host), none pending, and no CLI
// to answer; nil when it asked none.
func restoredApprovals(qs []journal.QuestionRecord) *approvals {
	if len(qs) == 0 {
		return nil
	}
	ap := &approvals{answered: make(map[string]string, len(qs))}
	for _, q := range qs {
		ap.asked = append(ap.asked, &approvalRequest{req: transcript.ControlRequest{RequestID: q.RequestID, Tool: q.Tool},
			at: q.AskedAt.Time, questions: q.Questions, answers: q.Answers})
		if q.Outcome == "" {
			q.Outcome = journal.QuestionHostEnded
		}
		ap.answered[q.RequestID] = q.Outcome
	}
	return ap
}

// restoreAnswers adds to tr, the transcript of restored submission sub
// read back from its log, how each of its question requests ended, after
// the request, as the running submission's transcript showed it.
func (s *Supervisor) restoreAnswers(sub *submission, tr *transcriptState) {
	s.mu.Lock()
	answers := map[string]transcript.Entry{}
	if ap := sub.appr; ap != nil {
		for _, r := range ap.asked {
			how := ap.answered[r.req.RequestID]
			answers[r.req.RequestID] = transcript.Entry{Kind: transcript.KindApprovalAnswer, Tool: r.req.Tool,
				ID: r.req.RequestID, Text: how, IsError: r.answers == nil}
		}
	}
	s.mu.Unlock()
	if len(answers) > 0 {
		tr.afterQuestions(answers)
	}
}

// afterQuestions puts answers[id] after the question entry of request id.
func (t *transcriptState) afterQuestions(answers map[string]transcript.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]transcript.Entry, 0, len(t.entries)+len(answers))
	for _, e := range t.entries {
		out = append(out, e)
		if a, ok := answers[e.ID]; ok && e.Kind == transcript.KindQuestion {
			out = append(out, a)
			delete(answers, e.ID)
		}
	}
	t.entries = nil
	t.appendLocked(out)
}

package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// maxEntries bounds the transcript entries kept in memory per submission.
const maxEntries = 5000

// transcriptState parses a preset's structured stdout into transcript
// entries (SPEC §8). line is called by the output pipeline with each raw
// stdout line; readers take only mu.
type transcriptState struct {
	mu       sync.Mutex
	parser   *transcript.Parser
	entries  []transcript.Entry // the newest maxEntries entries
	first    int64              // absolute number of entries[0]
	ended    bool
	events   bool // a stdout line was a JSON event (not a malformed line)
	session  string
	onChange func(session string) // called outside mu when the session id becomes known
	// onControl, when set, gets each control request line (SPEC §12),
	// outside mu; onFinal is called once, outside mu, after the final event.
	onControl func(line []byte)
	onFinal   func()
	// onEcho gets the id of each user message the CLI echoed back as it
	// took it (claude --replay-user-messages), onResult is called at each
	// turn's result; both outside mu (SPEC §11 steer).
	onEcho    func(id string)
	onResult  func()
	finalSeen bool
}

func newTranscriptState(p *Preset, onChange func(session string)) *transcriptState {
	return &transcriptState{parser: transcript.NewParser(transcript.Format(p.Format)), onChange: onChange}
}

// line takes one raw line of stream s: stdout lines are parsed, stderr
// lines become stderr entries (escape sequences removed, blank ones
// skipped).
func (t *transcriptState) line(s runner.Stream, raw []byte) {
	if s == runner.Stderr {
		text := strings.TrimRight(termtext.Plain(raw), "\n")
		if strings.TrimSpace(text) == "" {
			return
		}
		t.mu.Lock()
		t.appendLocked([]transcript.Entry{{Kind: transcript.KindStderr, Text: text}})
		t.mu.Unlock()
		return
	}
	t.mu.Lock()
	if t.ended {
		// the outcome is decided; later lines come from processes the
		// main one left behind
		t.mu.Unlock()
		return
	}
	es := t.parser.Line(raw)
	control := false
	var echoes []string
	results := 0
	for _, e := range es {
		t.events = t.events || e.Kind != transcript.KindMalformed
		control = control || e.Kind == transcript.KindApproval || e.Kind == transcript.KindApprovalAnswer || e.Kind == transcript.KindQuestion
		if e.Kind == transcript.KindUser && e.ID != "" {
			echoes = append(echoes, e.ID)
		}
		if e.Kind == transcript.KindResult {
			results++
		}
	}
	// a line the parser takes without an entry (claude's answer to the
	// initialize request) is an event too: NOW is not the raw line
	t.events = t.events || len(es) == 0 && json.Valid(raw)
	t.appendLocked(es)
	changed := ""
	if id := t.parser.SessionID(); id != "" && id != t.session {
		t.session, changed = id, id
	}
	final := !t.finalSeen && t.parser.Outcome().Final
	t.finalSeen = t.finalSeen || final
	t.mu.Unlock()
	if changed != "" && t.onChange != nil {
		t.onChange(changed)
	}
	if control && t.onControl != nil {
		t.onControl(raw)
	}
	if final && t.onFinal != nil {
		t.onFinal()
	}
	for _, id := range echoes {
		if t.onEcho != nil {
			t.onEcho(id)
		}
	}
	for ; results > 0 && t.onResult != nil; results-- {
		t.onResult()
	}
}

// cwd returns the working directory the CLI reported, "" before it
// did.
func (t *transcriptState) cwd() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parser.Cwd()
}

// add appends an entry subdash itself writes (an approval answer).
func (t *transcriptState) add(e transcript.Entry) {
	t.mu.Lock()
	t.appendLocked([]transcript.Entry{e})
	t.mu.Unlock()
}

func (t *transcriptState) appendLocked(es []transcript.Entry) {
	t.entries = append(t.entries, es...)
	if over := len(t.entries) - maxEntries; over > 0 {
		t.entries = append(t.entries[:0:0], t.entries[over:]...)
		t.first += int64(over)
	}
}

// outcome is the structured result of a submission.
type outcome struct {
	final, success bool
	err, answer    string
	sessionID      string
	// events is false when stdout held no JSON event at all: a CLI that
	// printed plain text (its usage, a version) instead of its stream.
	events bool
}

// outcome ends the parse (once) and returns the result.
func (t *transcriptState) outcome() *outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.ended = true
		t.appendLocked(t.parser.End())
	}
	o := t.parser.Outcome()
	return &outcome{final: o.Final, success: o.Success, err: o.Error, answer: o.Answer, sessionID: t.parser.SessionID(), events: t.events}
}

// activity returns what the CLI is doing now and its usage so far.
func (t *transcriptState) activity() (string, proto.Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.parser.Outcome()
	act := ""
	if !t.ended {
		act = t.parser.Activity()
	}
	return act, proto.Usage{InputTokens: o.InputTokens, OutputTokens: o.OutputTokens, CostUSD: o.CostUSD}
}

// window copies up to n entries starting at absolute entry from.
func (t *transcriptState) window(from int64, n int) (first, total int64, entries []transcript.Entry, pending string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	total = t.first + int64(len(t.entries))
	if from < t.first {
		from = t.first
	}
	for i := from - t.first; i < int64(len(t.entries)) && n > 0; i++ {
		entries = append(entries, t.entries[i])
		n--
	}
	if !t.ended {
		pending = t.parser.Pending()
	}
	return t.first, total, entries, pending
}

// onSession records a session id as soon as the CLI reports it, so list
// and the dashboard show it while the submission runs.
func (s *Supervisor) onSession(a *agent, sub *submission, id string) {
	s.mu.Lock()
	changed := a.sessionID != id
	a.sessionID = id
	s.mu.Unlock()
	if changed {
		s.journal.Write(journal.Event{Event: "session", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, SessionID: id})
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	}
}

// Transcript returns up to n transcript entries of submission seq (0 =
// latest) of agent id starting at absolute entry from (from < 0: the last
// n entries). ok is false when the submission's output is not structured
// (no preset with a JSON format). The transcript of a submission restored
// from an earlier run is read back from its log file first (SPEC §10), as
// Window reads lines back. Errors: unknown agent or submission, an
// unreadable log file.
func (s *Supervisor) Transcript(_ context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	type got struct {
		w  proto.TranscriptWindow
		ok bool
	}
	g, err := readBack(s, id, seq, func() (got, bool, error) {
		w, ok, unread, err := s.transcript(id, seq, from, n)
		return got{w, ok}, unread, err
	})
	return g.w, g.ok, err
}

// transcript is Transcript from memory; unread says a restored
// submission's transcript was not read back yet.
func (s *Supervisor) transcript(id string, seq int, from int64, n int) (w proto.TranscriptWindow, ok, unread bool, err error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return proto.TranscriptWindow{}, false, false, err
	}
	tr, unread := s.restoredTranscript(id, sub)
	if unread {
		return proto.TranscriptWindow{}, true, true, nil
	}
	if tr == nil {
		return proto.TranscriptWindow{}, false, false, nil
	}
	if from < 0 { // the last n entries
		first, total, _, _ := tr.window(0, 0)
		from = max(first, total-int64(n))
	}
	w.First, w.Total, w.Entries, w.Pending = tr.window(from, n)
	return w, true, false, nil
}

// innerAgents returns the inner agents the CLI reported so far in
// submission seq (SPEC §8).
func (t *transcriptState) innerAgents(seq int) []proto.InnerAgent {
	t.mu.Lock()
	in := t.parser.InnerAgents()
	t.mu.Unlock()
	out := make([]proto.InnerAgent, 0, len(in))
	for _, a := range in {
		out = append(out, proto.InnerAgentOf(a, seq))
	}
	return out
}

// innerLocked returns a's inner agents: those of its ended submissions,
// then the running one's so far (SPEC §8), at most proto.MaxInnerAgents.
// Call with s.mu held.
func innerLocked(a *agent) []proto.InnerAgent {
	out := slices.Clone(a.inner)
	if r := a.running; r != nil && r.tr != nil {
		out = proto.AppendInner(out, r.tr.innerAgents(r.seq))
	}
	return out
}

// writeTranscriptText writes the transcript that log lg of a submission of
// preset p holds to w as text (SPEC §3 logs): every entry as the
// transcript view draws it (transcript.Entry.Display), unstyled, each run of
// output the log misses as its marker line. It parses the log with a
// parser of its own, as a transcript read back is (loadTranscript), so
// it writes every entry, not only those kept in memory, holding one entry
// at a time. It returns the first read or write error.
func writeTranscriptText(w io.Writer, lg *output.Log, p *Preset) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	parser := transcript.NewParser(transcript.Format(p.Format))
	write := func(es []transcript.Entry) error {
		for _, e := range es {
			if _, err := bw.WriteString(e.Display().Text() + "\n"); err != nil {
				return err
			}
		}
		return nil
	}
	err := lg.Walk(func(part io.Reader) error {
		r := bufio.NewReaderSize(part, 256<<10)
		for {
			line, rerr := r.ReadBytes('\n')
			if len(line) > 0 {
				if err := write(parser.Line(bytes.TrimRight(line, "\r\n"))); err != nil {
					return err
				}
			}
			if rerr == io.EOF {
				return nil
			}
			if rerr != nil {
				return rerr
			}
		}
	}, func(g output.Gap) error {
		return write([]transcript.Entry{{Kind: transcript.KindNote, Text: strings.TrimPrefix(g.Marker(), "subdash: ")}})
	})
	if err == nil {
		err = write(parser.End())
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

package control

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/subdash/subdash/supervisor/proto"
)

// Window asks the host for up to n display lines of submission seq (0 =
// the latest) of agent id from absolute line from; from < 0 asks for the
// last n (SPEC §9: a viewer fetches only what it draws). It is a call on
// the socket, bounded by CallTimeout: the dashboard makes it in a command,
// never in Update. The host reads an evicted submission back itself, so the
// Window is never Evicted.
func (r *Remote) Window(id string, seq int, from int64, n int) (proto.Window, error) {
	var wr WindowResult
	if err := r.c.call(r.ctx, CallTimeout, http.MethodGet, agentPath(id, "window")+"?"+rangeQuery(seq, from, n), nil, &wr); err != nil {
		return proto.Window{}, err
	}
	w := proto.Window{First: wr.First, Total: wr.Total, Lines: make([]proto.Line, len(wr.Lines))}
	for i, l := range wr.Lines {
		w.Lines[i] = proto.Line{Text: l.Text, Stderr: l.Stderr, Partial: l.Partial}
	}
	return w, nil
}

// Transcript asks the host for up to n transcript entries of submission
// seq (0 = the latest) of agent id from absolute entry from (from < 0: the
// last n), as Window does for display lines; ok is false when the
// submission has no transcript.
func (r *Remote) Transcript(id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	var tr TranscriptResult
	if err := r.c.call(r.ctx, CallTimeout, http.MethodGet, agentPath(id, "transcript")+"?"+rangeQuery(seq, from, n), nil, &tr); err != nil {
		return proto.TranscriptWindow{}, false, err
	}
	return proto.TranscriptWindow{First: tr.First, Total: tr.Total, Entries: tr.Entries, Pending: tr.Pending}, tr.Structured, nil
}

// rangeQuery is the query of a window or transcript request.
func rangeQuery(seq int, from int64, n int) string {
	q := url.Values{"from": {strconv.FormatInt(from, 10)}, "n": {strconv.Itoa(n)}}
	if seq != 0 {
		q.Set("submission", strconv.Itoa(seq))
	}
	return q.Encode()
}

// applyCounts records the output counts an output event carried in the
// snapshot of the agent, so that Agents answers with them. The snapshots
// Agents returned share their Submissions with r's, so the slice is copied,
// never written in place.
func (r *Remote) applyCounts(o outputEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.agents {
		a := &r.agents[i]
		if a.AgentID == o.AgentID && o.Seq >= 1 && o.Seq <= len(a.Submissions) {
			subs := append([]proto.SubmissionInfo(nil), a.Submissions...)
			subs[o.Seq-1].Output = o.Output
			a.Submissions = subs
		}
	}
}

package control

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/transcript"
)

// maxLogs bounds how many logs a Remote keeps windows of.
const maxLogs = 16

// Window returns the display lines of [from, from+n) that the viewer holds
// (SPEC §9: it fetches only what it draws). When they are not all held, or
// the host reported new output since they were fetched, it starts a fetch
// in a goroutine and returns what it holds; the fetch's arrival is
// published as an Output change of the agent. n = 0 asks for the bounds.
func (r *Remote) Window(id string, seq int, from int64, n int) (supervisor.Window, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, key, err := r.cacheLocked(id, seq, false)
	if err != nil {
		return supervisor.Window{}, err
	}
	lo, hi := r.wantLocked(c, key, from, n, int64(len(c.lines)))
	w := supervisor.Window{First: c.first, Total: c.total}
	if lo < hi {
		w.Lines = append([]supervisor.Line(nil), c.lines[lo-c.from:hi-c.from]...)
	}
	return w, c.err
}

// Transcript returns the transcript entries of [from, from+n) that the
// viewer holds, as Window does for display lines.
func (r *Remote) Transcript(id string, seq int, from int64, n int) (supervisor.TranscriptWindow, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, key, err := r.cacheLocked(id, seq, true)
	if err != nil {
		return supervisor.TranscriptWindow{}, false, err
	}
	lo, hi := r.wantLocked(c, key, from, n, int64(len(c.entries)))
	w := supervisor.TranscriptWindow{First: c.first, Total: c.total, Pending: c.pending}
	if lo < hi {
		w.Entries = append([]transcript.Entry(nil), c.entries[lo-c.from:hi-c.from]...)
	}
	return w, c.structured || !c.fetchedOnce(), c.err
}

// fetchedOnce reports whether a fetch has filled the cache.
func (c *logCache) fetchedOnce() bool {
	return c.total > 0 || c.from > 0 || c.err != nil || c.structured
}

// cacheLocked returns the cache of a log, creating it; seq 0 is resolved
// to the agent's latest submission.
func (r *Remote) cacheLocked(id string, seq int, tr bool) (*logCache, logKey, error) {
	if seq == 0 {
		for _, a := range r.agents {
			if a.AgentID == id {
				seq = len(a.Submissions)
			}
		}
	}
	key := logKey{id: id, seq: seq, transcript: tr}
	c := r.logs[key]
	if c == nil {
		if len(r.logs) >= maxLogs {
			for k, old := range r.logs {
				if !old.fetching {
					delete(r.logs, k)
				}
			}
		}
		c = &logCache{stale: true}
		r.logs[key] = c
	}
	return c, key, nil
}

// wantLocked returns the held part [lo, hi) of [from, from+n), and starts
// a fetch when the range is not all held or the cache is stale.
func (r *Remote) wantLocked(c *logCache, key logKey, from int64, n int, held int64) (lo, hi int64) {
	lo, hi = max(from, c.first, c.from), min(from+int64(n), c.total, c.from+held)
	if n == 0 && !c.stale {
		return lo, lo
	}
	need := max(from, c.first) < lo || min(from+int64(n), c.total) > hi || c.stale
	if !need {
		return lo, max(lo, hi)
	}
	// Near the end (follow mode) fetch the tail, so that lines arriving
	// meanwhile come with it; elsewhere fetch a page around the range.
	want := fetchRange{from: -1, n: max(n, 200)}
	if from+int64(n) < c.total-int64(n) {
		want = fetchRange{from: max(from-int64(n), 0), n: 3 * max(n, 64)}
	}
	if c.err != nil && !c.stale && want == c.want {
		return lo, max(lo, hi) // failed already; new output retries
	}
	c.want = want
	if !c.fetching {
		c.fetching = true
		go r.fetch(key, c)
	}
	return lo, max(lo, hi)
}

// fetch gets the wanted range of a log from the host until no newer want
// arrived meanwhile, then publishes the change.
func (r *Remote) fetch(key logKey, c *logCache) {
	for {
		r.mu.Lock()
		want := c.want
		c.stale = false
		r.mu.Unlock()
		q := url.Values{"from": {strconv.FormatInt(want.from, 10)}, "n": {strconv.Itoa(want.n)}, "submission": {strconv.Itoa(key.seq)}}
		var err error
		var wr WindowResult
		var tr TranscriptResult
		if key.transcript {
			err = r.c.call(r.ctx, CallTimeout, http.MethodGet, agentPath(key.id, "transcript")+"?"+q.Encode(), nil, &tr)
		} else {
			err = r.c.call(r.ctx, CallTimeout, http.MethodGet, agentPath(key.id, "window")+"?"+q.Encode(), nil, &wr)
		}
		r.mu.Lock()
		c.err = err
		if err == nil && key.transcript {
			c.first, c.total, c.pending, c.structured = tr.First, tr.Total, tr.Pending, tr.Structured
			c.from, c.entries = tr.Total-int64(len(tr.Entries)), tr.Entries
			if want.from >= 0 {
				c.from = max(want.from, tr.First)
			}
		} else if err == nil {
			c.first, c.total = wr.First, wr.Total
			c.lines = make([]supervisor.Line, len(wr.Lines))
			for i, l := range wr.Lines {
				c.lines[i] = supervisor.Line{Text: l.Text, Stderr: l.Stderr, Partial: l.Partial}
			}
			c.from = wr.Total - int64(len(wr.Lines))
			if want.from >= 0 {
				c.from = max(want.from, wr.First)
			}
		}
		again := c.want != want || c.stale
		if !again || err != nil {
			c.fetching = false
		}
		r.mu.Unlock()
		r.feed.Publish(supervisor.Change{AgentID: key.id, Output: true})
		if !again || err != nil {
			return
		}
	}
}

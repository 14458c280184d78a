package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/internal/search"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// searchChunk is how many items Search reads at a time.
const searchChunk = 4096

// Search finds the display lines (or, with transcript, the transcript
// entries) of submission seq (0 = latest) of agent id from absolute item
// from on whose plain text contains query (termtext.Matcher: case ignored
// when query has no upper-case letter, as in less; the log pane marks what
// it matches with the same matcher). An entry matches when a line the
// transcript view shows of it does (transcript.Entry.Match). It scans what the scrollback holds, up
// to its end. Errors: unknown agent or submission.
func (s *Supervisor) Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	m := termtext.NewMatcher(query)
	res := proto.SearchResult{To: from}
	for {
		var first, total int64
		var found []bool
		if transcript {
			w, ok, err := s.Transcript(ctx, id, seq, res.To, searchChunk)
			if err != nil || !ok {
				return res, err
			}
			first, total = w.First, w.Total
			for _, e := range w.Entries {
				_, _, ok := e.Match(m.Index) // the lines the transcript view shows
				found = append(found, ok)
			}
		} else {
			w, err := s.Window(ctx, id, seq, res.To, searchChunk)
			if err != nil {
				return res, err
			}
			first, total = w.First, w.Total
			for _, l := range w.Lines {
				found = append(found, m.Match(termtext.Plain([]byte(l.Text))))
			}
		}
		res.To = max(res.To, first)
		for i, ok := range found {
			if ok {
				res.Matches = append(res.Matches, res.To+int64(i))
			}
		}
		res.To += int64(len(found))
		if len(found) == 0 || res.To >= total {
			return res, nil
		}
	}
}

// WriteLines writes the display lines of submission seq (0 = latest) of
// agent id to w, read from its log (SPEC §5: SGR kept when keepSGR, every
// other escape sequence removed, each run of output the log misses as its
// marker line): what the pager shows. Errors are those of Logs, found
// before anything is written, or w's.
func (s *Supervisor) WriteLines(_ context.Context, w io.Writer, id string, seq int, keepSGR bool) error {
	lg, _, err := s.openLog(id, seq)
	if err != nil {
		return err
	}
	defer lg.Close()
	return lg.WriteLines(w, keepSGR)
}

// searchTarget is one submission a search across agents reads, copied
// under s.mu.
type searchTarget struct {
	agentID, path string
	seq           int
	logPath       string
	structured    bool
}

var _ proto.Searcher = (*Supervisor)(nil)

// errSearchFull ends a search that found one hit past its limit.
var errSearchFull = errors.New("search limit reached")

// SearchAgents searches every agent's output for req.Query (SPEC §6
// search; proto.Searcher): agents oldest first (req.Agent: that agent
// and its descendants), each submission in order, read from its log
// file (a structured preset's: its transcript entries, SPEC §8). A hit
// is emitted as soon as it is found; the search stops at req.Limit hits
// (Truncated when another was found) or when ctx ends (its error).
// Errors: a bad query or regular expression (CodeInvalid), an unknown
// agent, emit's.
func (s *Supervisor) SearchAgents(ctx context.Context, req proto.SearchRequest, emit func(proto.SearchHit) error) (proto.SearchSummary, error) {
	p, err := search.Compile(req.Query, req.Regex)
	if err != nil {
		return proto.SearchSummary{}, &proto.Error{Code: proto.CodeInvalid, Message: err.Error()}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = proto.DefaultSearchLimit
	}
	targets, err := s.searchTargets(req.Agent, req.After)
	if err != nil {
		return proto.SearchSummary{}, err
	}
	var sum proto.SearchSummary
	give := func(h proto.SearchHit) error {
		if req.After != nil && h.AgentID == req.After.AgentID && h.Seq == req.After.Seq && h.Line <= req.After.Line {
			return nil // at or before the hit the page resumes after
		}
		if sum.Hits == limit {
			sum.Truncated = true
			return errSearchFull
		}
		sum.Hits++
		return emit(h)
	}
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		err := s.searchOne(ctx, p, t, give)
		switch {
		case errors.Is(err, errSearchFull):
			return sum, nil
		case errors.Is(err, fs.ErrNotExist):
			sum.Notes = append(sum.Notes, fmt.Sprintf("submission %d of agent %s: its log file is gone (%s)", t.seq, termtext.ShortID(t.agentID), t.logPath))
		case err != nil && ctx.Err() == nil && !isEmitErr(err):
			sum.Notes = append(sum.Notes, fmt.Sprintf("submission %d of agent %s: %v", t.seq, termtext.ShortID(t.agentID), err))
		case err != nil:
			return sum, unwrapEmit(err)
		}
	}
	return sum, nil
}

// emitErr carries an error of the caller's emit through a scan.
type emitErr struct{ err error }

// Error returns the caller's error's text; unwrapEmit gives back the error.
func (e emitErr) Error() string { return e.err.Error() }

func isEmitErr(err error) bool { var e emitErr; return errors.As(err, &e) }

func unwrapEmit(err error) error {
	var e emitErr
	if errors.As(err, &e) {
		return e.err
	}
	return err
}

// searchTargets returns the submissions to search, in order: every
// agent's (or the subtree of target's), those that started, from after's
// agent and submission on.
func (s *Supervisor) searchTargets(target string, after *proto.SearchHitAt) ([]searchTarget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	agents := s.order
	if target != "" {
		a, err := s.lookup(target)
		if err != nil {
			return nil, err
		}
		agents = nil
		for _, d := range s.order {
			if d == a || strings.HasPrefix(d.path, a.path+"/") {
				agents = append(agents, d)
			}
		}
	}
	skipping := after != nil
	var out []searchTarget
	for _, a := range agents {
		if skipping && !strings.EqualFold(a.id, after.AgentID) {
			continue
		}
		for _, sub := range a.subs {
			if skipping && sub.seq < after.Seq {
				continue
			}
			if !sub.hasLog() || sub.out == nil && !sub.restored {
				continue // not started: no log yet
			}
			out = append(out, searchTarget{agentID: a.id, path: a.path, seq: sub.seq, logPath: sub.logPath(), structured: a.preset.Structured()})
		}
		skipping = false
	}
	if skipping { // the agent of after is gone (forgotten): search all again
		return s.searchTargetsAllLocked(agents), nil
	}
	return out, nil
}

func (s *Supervisor) searchTargetsAllLocked(agents []*agent) []searchTarget {
	var out []searchTarget
	for _, a := range agents {
		for _, sub := range a.subs {
			if sub.hasLog() && (sub.out != nil || sub.restored) {
				out = append(out, searchTarget{agentID: a.id, path: a.path, seq: sub.seq, logPath: sub.logPath(), structured: a.preset.Structured()})
			}
		}
	}
	return out
}

// searchOne searches one submission: its log's display lines, or a
// structured preset's transcript entries when its log may hold a match.
func (s *Supervisor) searchOne(ctx context.Context, p *search.Pattern, t searchTarget, give func(proto.SearchHit) error) error {
	lg, err := output.OpenLog(t.logPath) // with the parts the cap kept (SPEC §5)
	if err != nil {
		return err
	}
	defer lg.Close()
	hit := func(line int64, text string, sp termtext.Span) error {
		if err := give(proto.SearchHit{AgentID: t.agentID, AgentPath: t.path, Seq: t.seq, Line: line, Text: cutAround(text, sp, proto.MaxSearchText)}); err != nil {
			if errors.Is(err, errSearchFull) {
				return err
			}
			return emitErr{err}
		}
		return nil
	}
	if !t.structured {
		// each run of bytes the log holds, numbered on from the one
		// before; a gap is its marker line, as the log pane reads it back
		var line int64
		return lg.Walk(func(r io.Reader) error {
			var failed error
			n, err := p.ScanFrom(ctx, r, line, func(h search.Hit) bool {
				failed = hit(h.Line, h.Text, h.Span)
				return failed == nil
			})
			line += n
			if failed != nil {
				return failed
			}
			return err
		}, func(g output.Gap) error {
			defer func() { line++ }()
			if sp, ok := p.Match(g.Marker()); ok {
				return hit(line, g.Marker(), sp)
			}
			return nil
		})
	}
	if ok, err := p.Candidate(ctx, lg); err != nil || !ok {
		return err
	}
	for from := int64(0); ; {
		w, ok, err := s.Transcript(ctx, t.agentID, t.seq, from, searchChunk)
		if err != nil || !ok {
			return err
		}
		from = max(from, w.First)
		for i, e := range w.Entries {
			// the lines the transcript view shows, as the log search's
			if l, sp, ok := e.Match(p.Match); ok {
				if err := hit(from+int64(i), l, sp); err != nil {
					return err
				}
			}
		}
		from += int64(len(w.Entries))
		if len(w.Entries) == 0 || from >= w.Total {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// cutAround cuts text to at most n bytes around the match sp, "…" where
// it was cut, on character boundaries.
func cutAround(text string, sp termtext.Span, n int) string {
	if len(text) <= n {
		return text
	}
	start := max(0, sp.Start-n/4)
	end := min(len(text), start+n)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	out := text[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

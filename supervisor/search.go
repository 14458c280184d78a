package supervisor

import (
	"context"
	"io"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// searchChunk is how many items Search reads at a time.
const searchChunk = 4096

// Search finds the display lines (or, with transcript, the transcript
// entries) of submission seq (0 = latest) of agent id from absolute item
// from on whose plain text contains query (termtext.Matcher: case ignored
// when query has no upper-case letter, as in less; the log pane marks what
// it matches with the same matcher). It scans what the scrollback holds, up
// to its end. Errors: unknown agent or submission.
func (s *Supervisor) Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	m := termtext.NewMatcher(query)
	match := func(text string) bool { return m.Match(termtext.Plain([]byte(text))) }
	res := proto.SearchResult{To: from}
	for {
		var first, total int64
		var texts []string
		if transcript {
			w, ok, err := s.Transcript(ctx, id, seq, res.To, searchChunk)
			if err != nil || !ok {
				return res, err
			}
			first, total = w.First, w.Total
			for _, e := range w.Entries {
				texts = append(texts, e.Tool+" "+e.Summary+"\n"+e.Text)
			}
		} else {
			w, err := s.Window(ctx, id, seq, res.To, searchChunk)
			if err != nil {
				return res, err
			}
			first, total = w.First, w.Total
			for _, l := range w.Lines {
				texts = append(texts, l.Text)
			}
		}
		res.To = max(res.To, first)
		for i, t := range texts {
			if match(t) {
				res.Matches = append(res.Matches, res.To+int64(i))
			}
		}
		res.To += int64(len(texts))
		if len(texts) == 0 || res.To >= total {
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

package supervisor

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/subdash/subdash/supervisor/termtext"
)

// Feed publishes changes to subscriptions, as a supervisor does for its
// own agents. A viewer's client (SPEC §9) republishes what its host pushes
// through one, so the dashboard subscribes to a viewer as to a host. The
// zero Feed is ready to use.
type Feed struct{ h hub }

// Subscribe returns a new subscription to the feed's changes.
func (f *Feed) Subscribe() *Subscription { return f.h.subscribe(false) }

// Publish records c for every subscription; it never blocks.
func (f *Feed) Publish(c Change) { f.h.publish(c) }

// SearchResult is what Search found: the absolute numbers of the matching
// items in [from, To), in order.
type SearchResult struct {
	Matches []int64 `json:"matches"`
	To      int64   `json:"to"`
}

// searchChunk is how many items Search reads at a time.
const searchChunk = 4096

// Search finds the display lines (or, with transcript, the transcript
// entries) of submission seq (0 = latest) of agent id from absolute item
// from on whose plain text contains query (ignoring ASCII case when query
// has no upper-case letter, as less does). It scans what the scrollback
// holds, up to its end. Errors: unknown agent or submission.
func (s *Supervisor) Search(id string, seq int, transcript bool, query string, from int64) (SearchResult, error) {
	fold := query == strings.ToLower(query)
	match := func(text string) bool {
		plain := termtext.Plain([]byte(text))
		if fold {
			plain = strings.ToLower(plain)
		}
		return strings.Contains(plain, query)
	}
	res := SearchResult{To: from}
	for {
		var first, total int64
		var texts []string
		if transcript {
			w, ok, err := s.Transcript(id, seq, res.To, searchChunk)
			if err != nil || !ok {
				return res, err
			}
			first, total = w.First, w.Total
			for _, e := range w.Entries {
				texts = append(texts, e.Tool+" "+e.Summary+"\n"+e.Text)
			}
		} else {
			w, err := s.Window(id, seq, res.To, searchChunk)
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
// agent id to w, read from its log file (SPEC §5: SGR kept when keepSGR,
// every other escape sequence removed): what the pager shows. Errors are
// those of Logs, found before anything is written, or w's.
func (s *Supervisor) WriteLines(w io.Writer, id string, seq int, keepSGR bool) error {
	sub, err := s.submission(id, seq)
	if err != nil {
		return err
	}
	f, err := os.Open(sub.logPath)
	if err != nil {
		return &Error{CodeInternal, fmt.Sprintf("cannot read log file %s: %v", sub.logPath, err)}
	}
	defer f.Close()
	return termtext.WriteLines(w, f, keepSGR)
}

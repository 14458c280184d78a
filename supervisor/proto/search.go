package proto

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// DefaultSearchLimit is how many hits a search across agents returns when
// its request names no limit (SPEC §6 `ctl search --limit`).
const DefaultSearchLimit = 1000

// SearchRequest is a search across agents (SPEC §6 search): Query over
// the display text of every submission of every agent the host knows
// (restored agents of earlier runs included, forgotten ones not), and of
// a structured preset's transcript; smart case as the log search (case
// ignored when Query has no upper-case letter), or with Regex a regular
// expression (Go's RE2 syntax). Agent (a target, SPEC §14) limits it to
// that agent and its descendants; Limit bounds the hits (0:
// DefaultSearchLimit); After resumes after a hit given before (a page
// further: agents are searched oldest first, submissions by seq, lines
// in order).
type SearchRequest struct {
	Query string       `json:"query"`
	Agent string       `json:"agent,omitempty"`
	Regex bool         `json:"regex,omitempty"`
	Limit int          `json:"limit,omitempty"`
	After *SearchHitAt `json:"after,omitempty"`
}

// Check returns why r's query cannot be searched for, in words: it is
// empty, or with Regex it is a regular expression that does not compile
// (`bad regular expression "(": missing closing )`); nil when it can. A
// front-end calls it before it asks (ctl: a usage error), the engine
// before it searches.
func (r SearchRequest) Check() error {
	if r.Query == "" {
		return fmt.Errorf("the query is empty; give the text to search for")
	}
	if r.Regex {
		if _, err := regexp.Compile(r.Query); err != nil {
			return fmt.Errorf("bad regular expression %q: %s", r.Query, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	}
	return nil
}

// SearchHitAt names where a hit is: an agent, its submission and a line
// (a display line; for a structured preset's submission a transcript
// entry), both absolute numbers from 0 as Window and Transcript count.
type SearchHitAt struct {
	AgentID string `json:"agent_id"`
	Seq     int    `json:"seq"`
	Line    int64  `json:"line"`
}

// SearchHit is one line that matched (one per line, however many matches
// it holds): where it is, the agent's path, and its plain text (cut
// around the match to at most MaxSearchText bytes, "…" where cut). A
// hit of an agent whose AgentInfo.Structured is set is a transcript
// entry, its Text the entry's line that matched.
type SearchHit struct {
	AgentID   string `json:"agent_id"`
	AgentPath string `json:"agent_path"`
	Seq       int    `json:"seq"`
	Line      int64  `json:"line"`
	Text      string `json:"text"`
}

// At returns where h is, to resume a search after it.
func (h SearchHit) At() SearchHitAt { return SearchHitAt{AgentID: h.AgentID, Seq: h.Seq, Line: h.Line} }

// MaxSearchText is the most bytes of a line a SearchHit carries.
const MaxSearchText = 1000

// SearchSummary ends a search: how many hits it gave, and Truncated when
// it stopped at the limit with more to find. Notes say what could not be
// searched (a log file that is gone or unreadable), in words.
type SearchSummary struct {
	Hits      int      `json:"hits"`
	Truncated bool     `json:"truncated"`
	Notes     []string `json:"notes,omitempty"`
}

// Searcher searches every agent's output (SPEC §6 search; the host's
// feature FeatureSearch). SearchAgents calls emit with each hit as it is
// found, in order (a big search shows its first hits at once); an error
// of emit ends the search and is returned; ctx ending cancels it (a new
// query cancels the old one). Errors: an empty query, a bad regular
// expression (CodeInvalid, the reason in words), an unknown Agent.
type Searcher interface {
	SearchAgents(ctx context.Context, req SearchRequest, emit func(SearchHit) error) (SearchSummary, error)
}

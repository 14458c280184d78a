package agentsearch

import (
	"context"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// HitsMsg carries the hits a page found since the last message, and, in
// its last message (Final), the page's summary or error. Hand it to
// Add, then run Next (nil after the last).
type HitsMsg struct {
	gen     int
	Hits    []proto.SearchHit
	Final   bool
	Summary proto.SearchSummary
	Err     error
	Next    tea.Cmd
}

// Run returns the command that searches with req for the results of
// generation gen (Start's) until ctx ends: the host's search runs in a
// goroutine, each message hands over the hits found since the one
// before, so the first hits show before a big search ends. Cancel ctx
// when a new query starts.
func Run(ctx context.Context, s proto.Searcher, req proto.SearchRequest, gen int) tea.Cmd {
	st := &stream{wake: make(chan struct{}, 1)}
	var once sync.Once
	start := func() {
		go func() {
			sum, err := s.SearchAgents(ctx, req, func(h proto.SearchHit) error {
				st.mu.Lock()
				st.hits = append(st.hits, h)
				st.mu.Unlock()
				st.signal()
				return nil
			})
			st.mu.Lock()
			st.final, st.sum, st.err = true, sum, err
			st.mu.Unlock()
			st.signal()
		}()
	}
	var next tea.Cmd
	next = func() tea.Msg {
		once.Do(start)
		<-st.wake
		st.mu.Lock()
		defer st.mu.Unlock()
		msg := HitsMsg{gen: gen, Hits: st.hits, Final: st.final, Summary: st.sum, Err: st.err}
		st.hits = nil
		if !st.final {
			msg.Next = next
		}
		return msg
	}
	return next
}

// stream is what a search's goroutine found and not yet handed over.
type stream struct {
	mu    sync.Mutex
	hits  []proto.SearchHit
	final bool
	sum   proto.SearchSummary
	err   error
	wake  chan struct{} // holds one token when there is news
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

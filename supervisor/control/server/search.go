package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// Search across agents (SPEC §6 search, feature proto.FeatureSearch):
//
//	GET /v1/search?q=&agent=&regex=1&limit=&after_agent=&after_seq=&after_line=
//
// answers JSON Lines (application/x-ndjson) as the host finds them: one
// proto.SearchHit a line, then the proto.SearchSummary (the line with
// "hits"). Blank lines keep a long search without hits alive
// (wire.HeartbeatInterval). An error before the first hit is the operation's
// (400 for a bad query or regular expression); one after aborts the
// answer, so a client never takes a short success.

func (srv *Server) searchAgents(w http.ResponseWriter, r *http.Request) {
	req, err := searchRequestOf(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	var mu sync.Mutex
	wrote, finished := false, false
	flusher, _ := w.(http.Flusher)
	write := func(line []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return errors.New("the answer ended")
		}
		if !wrote {
			w.Header().Set("Content-Type", "application/x-ndjson")
			wrote = true
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	stop := make(chan struct{})
	defer func() {
		mu.Lock()
		finished = true // the heartbeat writes nothing after the handler
		mu.Unlock()
		close(stop)
	}()
	go func() {
		beat := time.NewTicker(wire.HeartbeatInterval)
		defer beat.Stop()
		for {
			select {
			case <-stop:
				return
			case <-beat.C:
				_ = write([]byte("\n"))
			}
		}
	}()
	sum, err := srv.sup.SearchAgents(r.Context(), req, func(h proto.SearchHit) error {
		return write(append(wire.Marshal(h), '\n'))
	})
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if !wrote {
			wrote = true // the heartbeat writes no more
			writeError(w, err)
			return
		}
		panic(http.ErrAbortHandler) // the connection closes before the summary
	}
	_ = write(append(wire.Marshal(sum), '\n'))
}

// searchRequestOf reads the query of GET /v1/search.
func searchRequestOf(q url.Values) (proto.SearchRequest, error) {
	req := proto.SearchRequest{Query: q.Get("q"), Agent: q.Get("agent"), Regex: q.Get("regex") == "1"}
	bad := func(name string) error {
		return &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("%s must be a whole number, not %q", name, q.Get(name))}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return req, bad("limit")
		}
		req.Limit = n
	}
	if id := q.Get("after_agent"); id != "" {
		seq, err := strconv.Atoi(q.Get("after_seq"))
		if err != nil {
			return req, bad("after_seq")
		}
		line, err := strconv.ParseInt(q.Get("after_line"), 10, 64)
		if err != nil {
			return req, bad("after_line")
		}
		req.After = &proto.SearchHitAt{AgentID: id, Seq: seq, Line: line}
	}
	return req, nil
}

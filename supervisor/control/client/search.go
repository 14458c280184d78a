package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// SearchAgents searches every agent of the host behind the socket
// (GET /v1/search; proto.Searcher), calling emit with each hit as it
// arrives. A host without the route answers 404: check
// HostConfig.Has(proto.FeatureSearch) first. An answer broken off before
// its summary is an error, never a short success.
func (c *Client) SearchAgents(ctx context.Context, req proto.SearchRequest, emit func(proto.SearchHit) error) (proto.SearchSummary, error) {
	q := url.Values{"q": {req.Query}}
	if req.Agent != "" {
		q.Set("agent", req.Agent)
	}
	if req.Regex {
		q.Set("regex", "1")
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if a := req.After; a != nil {
		q.Set("after_agent", a.AgentID)
		q.Set("after_seq", strconv.Itoa(a.Seq))
		q.Set("after_line", strconv.FormatInt(a.Line, 10))
	}
	var sum proto.SearchSummary
	done := false
	err := c.stream(ctx, wire.Search.At("", q), func(body io.Reader, progress func()) error {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			progress()
			line := sc.Bytes()
			if len(line) == 0 {
				continue // a heartbeat
			}
			var v struct {
				proto.SearchHit
				Hits      *int     `json:"hits"`
				Truncated bool     `json:"truncated"`
				Notes     []string `json:"notes"`
			}
			if err := json.Unmarshal(line, &v); err != nil {
				return fmt.Errorf("bad answer from subdash at %s: %v", c.socket, err)
			}
			if v.Hits != nil {
				sum, done = proto.SearchSummary{Hits: *v.Hits, Truncated: v.Truncated, Notes: v.Notes}, true
				return nil
			}
			if err := emit(v.SearchHit); err != nil {
				return emitError{err}
			}
		}
		if err := sc.Err(); err != nil {
			return c.brokenOff(err)
		}
		return nil
	})
	var ee emitError
	if errors.As(err, &ee) {
		return sum, ee.err
	}
	if err == nil && !done {
		err = c.brokenOff(io.ErrUnexpectedEOF)
	}
	return sum, err
}

// emitError carries the caller's error out of a stream's reader.
type emitError struct{ err error }

// Error returns the caller's error's text; the stream's reader unwraps it.
func (e emitError) Error() string { return e.err.Error() }

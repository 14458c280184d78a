package client

import (
	"context"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// The reads of proto.Reader over the socket (SPEC §9: a viewer fetches
// only what it draws), each bounded by CallTimeout, the streams by
// CallTimeout without progress.

// Window asks the host for up to n display lines of submission seq (0 =
// the latest) of agent id from absolute line from; from < 0 asks for the
// last n. The host reads an evicted submission back itself.
func (c *Client) Window(ctx context.Context, id string, seq int, from int64, n int) (proto.Window, error) {
	var wr wire.WindowResult
	if err := c.do(ctx, submissionAt(wire.Window, id, seq, rangeQuery(from, n)), nil, &wr); err != nil {
		return proto.Window{}, err
	}
	return proto.Window{First: wr.First, Total: wr.Total, Lines: wr.Lines}, nil
}

// Transcript asks the host for up to n transcript entries of submission
// seq of agent id from absolute entry from (from < 0: the last n), as
// Window does for display lines; ok is false when the submission has no
// transcript.
func (c *Client) Transcript(ctx context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	var tr wire.TranscriptResult
	if err := c.do(ctx, submissionAt(wire.Transcript, id, seq, rangeQuery(from, n)), nil, &tr); err != nil {
		return proto.TranscriptWindow{}, false, err
	}
	return proto.TranscriptWindow{First: tr.First, Total: tr.Total, Entries: tr.Entries, Pending: tr.Pending}, tr.Structured, nil
}

// Windows asks the host for several windows in one request (POST
// /v1/windows, proto.FeatureFollowMany): each answer holds its window or
// its own error. A host without the feature answers 404.
func (c *Client) Windows(ctx context.Context, reqs []proto.WindowRequest) ([]proto.WindowAnswer, error) {
	body := wire.WindowsRequest{Windows: make([]wire.WindowAsk, len(reqs))}
	for i, q := range reqs {
		body.Windows[i] = wire.WindowAsk{AgentID: q.AgentID, Submission: q.Submission, Transcript: q.Transcript, From: q.From, N: q.N}
	}
	var res wire.WindowsResult
	if err := c.do(ctx, wire.Windows.At("", nil), body, &res); err != nil {
		return nil, err
	}
	out := make([]proto.WindowAnswer, len(res.Windows))
	for i, a := range res.Windows {
		switch {
		case a.Error != "":
			out[i].Err = &proto.Error{Code: a.Code, Message: a.Error}
		case i < len(reqs) && reqs[i].Transcript:
			out[i].Structured = a.Structured
			out[i].Transcript = proto.TranscriptWindow{First: a.First, Total: a.Total, Entries: a.Entries, Pending: a.Pending}
		default:
			out[i].Window = proto.Window{First: a.First, Total: a.Total, Lines: a.Lines}
		}
	}
	return out, nil
}

// rangeQuery is the query of a window or transcript request.
func rangeQuery(from int64, n int) url.Values {
	return url.Values{"from": {strconv.FormatInt(from, 10)}, "n": {strconv.Itoa(n)}}
}

// submissionAt returns the read rt of submission seq (0: the latest, left
// out) of agent id, with the query q (nil: none).
func submissionAt(rt wire.Route, id string, seq int, q url.Values) wire.Target {
	if seq != 0 {
		if q == nil {
			q = url.Values{}
		}
		q.Set("submission", strconv.Itoa(seq))
	}
	return rt.At(id, q)
}

// Search asks the host for the items of submission seq of agent id from
// item from on that contain query.
func (c *Client) Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	q := url.Values{"q": {query}, "from": {strconv.FormatInt(from, 10)}}
	if transcript {
		q.Set("transcript", "1")
	}
	var res proto.SearchResult
	return res, c.do(ctx, submissionAt(wire.LogSearch, id, seq, q), nil, &res)
}

// Message returns the whole message of submission seq (0 = the latest) of
// agent id (SPEC §10), for resend and edit-and-resend in a viewer.
func (c *Client) Message(ctx context.Context, id string, seq int) (string, error) {
	var b strings.Builder
	err := c.do(ctx, submissionAt(wire.Message, id, seq, nil), nil, &b)
	return b.String(), err
}

// WriteMessage streams the whole message of submission seq (0 = the
// latest) of agent id to w as it arrives (proto.MessageFiles): the file
// $EDITOR opens in a viewer.
func (c *Client) WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error {
	return c.stream(ctx, submissionAt(wire.Message, id, seq, nil), func(body io.Reader, progress func()) error {
		return c.copyBody(w, body, progress)
	})
}

// WriteLines streams the display lines of submission seq of agent id from
// the host to w (the pager's feed), SGR kept when keepSGR.
func (c *Client) WriteLines(ctx context.Context, w io.Writer, id string, seq int, keepSGR bool) error {
	q := url.Values{}
	if keepSGR {
		q.Set("sgr", "1")
	}
	return c.stream(ctx, submissionAt(wire.Lines, id, seq, q), func(body io.Reader, progress func()) error {
		return c.copyBody(w, body, progress)
	})
}

// Storage says where the host's logs are and how much space they take, as
// GET /v1/info measures them now.
func (c *Client) Storage(ctx context.Context) (proto.Storage, error) {
	info, err := c.Info(ctx)
	return info.Logs, err
}

// The roles a Client and a viewer's Remote play (package proto).
var (
	_ interface {
		proto.Reader
		proto.Operator
		proto.Waiter
		proto.Lister
	} = (*Client)(nil)
	_ interface {
		proto.Viewer
		proto.Reader
		proto.Operator
	} = (*Remote)(nil)
)

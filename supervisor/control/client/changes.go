package client

import (
	"context"
	"io"
	"net/url"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// WriteChanges copies the diff of submission seq (0 = the latest) of
// agent id to w as it arrives (GET /v1/agents/{id}/diff; proto.Differ).
// A host without the route answers 404: check
// HostConfig.Has(proto.FeatureChanges) first.
func (c *Client) WriteChanges(ctx context.Context, w io.Writer, id string, seq int, color bool) error {
	q := url.Values{}
	if color {
		q.Set("color", "1")
	}
	return c.stream(ctx, submissionAt(wire.Diff, id, seq, q), func(body io.Reader, progress func()) error { return c.copyBody(w, body, progress) })
}

var _ proto.Differ = (*Client)(nil)

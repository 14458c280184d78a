package ctl

import (
	"bufio"
	"context"
	"io"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// writeSearch runs `subdash ctl search`: each hit as a JSON line on w as
// it arrives, then the summary line.
func writeSearch(ctx context.Context, c *client.Client, w io.Writer, req proto.SearchRequest) error {
	bw := bufio.NewWriter(w)
	sum, err := c.SearchAgents(ctx, req, func(h proto.SearchHit) error {
		_, err := bw.Write(append(wire.Marshal(h), '\n'))
		if err == nil {
			err = bw.Flush()
		}
		return err
	})
	if err == nil {
		_, err = bw.Write(append(wire.Marshal(sum), '\n'))
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

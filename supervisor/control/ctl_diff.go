package control

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/subdash/subdash/supervisor/control/client"
)

// isTerminal reports whether w is a terminal: ctl diff colours only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// diffRequest is `subdash ctl diff ID [--submission N]`.
func diffRequest(id string, seq *int, stdout io.Writer) (func(context.Context, *client.Client) (any, error), error) {
	n := 0
	if seq != nil {
		if *seq < 1 {
			return nil, fmt.Errorf("--submission needs a sequence number (1, 2, …), not %d", *seq)
		}
		n = *seq
	}
	color := isTerminal(stdout)
	return func(ctx context.Context, c *client.Client) (any, error) {
		return streamed{}, c.WriteChanges(ctx, stdout, id, n, color)
	}, nil
}

package control

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/subdash/subdash/supervisor/control/client"
)

// What a submission changed (SPEC §15, feature proto.FeatureChanges):
//
//	GET /v1/agents/{id}/diff?submission=N&color=1
//
// streams the unified diff from the snapshot at the submission's start to
// its end (to now while it runs) as text/plain, coloured as git colours
// it with color=1. The counts are in every snapshot and summary
// (proto.Changes).

func (srv *Server) diff(w http.ResponseWriter, r *http.Request) {
	seq, ok := submissionParam(w, r)
	if !ok {
		return
	}
	id, color := r.PathValue("id"), r.URL.Query().Get("color") == "1"
	stream(w, r, "text/plain; charset=utf-8", func(w io.Writer) error { return srv.sup.WriteChanges(r.Context(), w, id, seq, color) })
}

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

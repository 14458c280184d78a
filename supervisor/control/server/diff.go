package server

import (
	"io"
	"net/http"
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

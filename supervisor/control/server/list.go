package server

import (
	"bufio"
	"net/http"

	"github.com/subdash/subdash/supervisor/proto"
)

// writeList answers GET /v1/agents with res, written a summary at a time
// into a buffered writer on w (proto.ListResult.WriteJSON): a list of
// thousands of agents (megabytes of JSON) is never whole in the host's
// memory, nor is a buffer grown to hold it.
func writeList(w http.ResponseWriter, res proto.ListResult) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	_ = res.WriteJSON(bw) // the client went away: nobody to tell
	_ = bw.Flush()
}

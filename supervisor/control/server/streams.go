package server

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/subdash/subdash/supervisor/proto"
)

// The streamed answers: a submission's log (GET /v1/agents/{id}/logs) and
// its display lines for the pager (GET /v1/agents/{id}/lines).

// logs streams the output of a submission: plain text, or with raw=1 the
// log file's bytes.
func (srv *Server) logs(w http.ResponseWriter, r *http.Request) {
	seq, ok := submissionParam(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if r.URL.Query().Get("raw") != "1" {
		stream(w, r, "text/plain; charset=utf-8", func(w io.Writer) error { return srv.sup.WriteLogs(r.Context(), w, id, seq, false) })
		return
	}
	// The bytes stay the child's: where output is missing is said beside
	// them, in a header set before the first byte (SPEC §5).
	stream(w, r, "application/octet-stream", func(cw io.Writer) error {
		return srv.sup.WriteRawLog(r.Context(), cw, id, seq, func(gaps []proto.LogGap) {
			if len(gaps) > 0 {
				b, _ := json.Marshal(gaps)
				w.Header().Set(proto.LogGapsHeader, string(b))
			}
		})
	})
}

// lines streams the display lines of a submission (SGR kept with sgr=1):
// what the pager shows.
func (srv *Server) lines(w http.ResponseWriter, r *http.Request) {
	seq, ok := submissionParam(w, r)
	if !ok {
		return
	}
	id, sgr := r.PathValue("id"), r.URL.Query().Get("sgr") == "1"
	stream(w, r, "text/plain; charset=utf-8", func(w io.Writer) error { return srv.sup.WriteLines(r.Context(), w, id, seq, sgr) })
}

// stream answers with what write writes, as contentType. An error of
// write before it wrote anything (an unknown agent or submission, a log
// file that is gone) is answered as the operation's error. One after the
// answer began aborts the response: the connection closes before the end
// of the body, so the client reports a failure instead of a short success
// (SPEC §6: nothing is lost without saying so).
func stream(w http.ResponseWriter, r *http.Request, contentType string, write func(io.Writer) error) {
	cw := &countingWriter{w: w}
	w.Header().Set("Content-Type", contentType)
	err := write(cw)
	switch {
	case err == nil:
	case cw.n == 0:
		writeError(w, err)
	default:
		panic(http.ErrAbortHandler) // net/http closes the connection, logging nothing
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

// Write writes p to the wrapped writer and counts what it took.
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

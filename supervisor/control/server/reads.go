package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// The routes a viewer (SPEC §9) uses besides the operations: what it
// draws, fetched a window at a time, so that its cost does not grow with a
// submission's output. from < 0 asks for the last n items (the bottom of
// the log, follow mode).

func (srv *Server) config(w http.ResponseWriter, r *http.Request) {
	cfg := srv.sup.Config()
	res := wire.ConfigResult{Config: SettingsOf(cfg)}
	if cfg.Preset != nil {
		res.PresetName, res.PresetArgs, res.PresetFormat = cfg.Preset.Name, cfg.Preset.Args, cfg.Preset.Format
	}
	writeJSON(w, http.StatusOK, res)
}

// rangeParams reads submission, from and n; on a bad one it answers 400.
func rangeParams(w http.ResponseWriter, r *http.Request) (seq int, from int64, n int, ok bool) {
	if seq, ok = submissionParam(w, r); !ok {
		return
	}
	q := r.URL.Query()
	var err error
	if v := q.Get("from"); v != "" {
		if from, err = strconv.ParseInt(v, 10, 64); err != nil {
			writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("from must be a line number, not %q", v)})
			return 0, 0, 0, false
		}
	}
	n = 100
	if v := q.Get("n"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 0 || n > proto.MaxWindowItems {
			writeError(w, proto.ErrWindowCount(v))
			return 0, 0, 0, false
		}
	}
	return seq, from, n, true
}

// window answers a range of display lines; the supervisor reads an
// evicted submission back from its log file itself: a viewer never reads
// files.
func (srv *Server) window(w http.ResponseWriter, r *http.Request) {
	seq, from, n, ok := rangeParams(w, r)
	if !ok {
		return
	}
	win, err := srv.sup.Window(r.Context(), r.PathValue("id"), seq, from, n)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.WindowOf(win))
}

// transcriptWindow answers a range of transcript entries, read back as
// window's lines are.
func (srv *Server) transcriptWindow(w http.ResponseWriter, r *http.Request) {
	seq, from, n, ok := rangeParams(w, r)
	if !ok {
		return
	}
	tw, structured, err := srv.sup.Transcript(r.Context(), r.PathValue("id"), seq, from, n)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.TranscriptResult{Structured: structured, First: tw.First, Total: tw.Total, Entries: tw.Entries, Pending: tw.Pending})
}

func (srv *Server) search(w http.ResponseWriter, r *http.Request) {
	seq, from, _, ok := rangeParams(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	res, err := srv.sup.Search(r.Context(), r.PathValue("id"), seq, q.Get("transcript") == "1", q.Get("q"), max(from, 0))
	reply(w, r, http.StatusOK, res, err)
}

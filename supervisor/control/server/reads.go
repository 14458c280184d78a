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

// windows answers several windows in one request (FeatureFollowMany): a
// viewer's tiles. Each is read as window or transcriptWindow reads it; a
// window's error is its own answer, the others still come.
func (srv *Server) windows(w http.ResponseWriter, r *http.Request) {
	var req wire.WindowsRequest
	if !decode(w, r, &req) {
		return
	}
	if len(req.Windows) > wire.MaxWindows {
		writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("at most %d windows a request, not %d", wire.MaxWindows, len(req.Windows))})
		return
	}
	res := wire.WindowsResult{Windows: make([]wire.WindowAnswer, len(req.Windows))}
	for i, ask := range req.Windows {
		res.Windows[i] = srv.windowAnswer(r, ask)
	}
	writeJSON(w, http.StatusOK, res)
}

// windowAnswer reads the window ask names.
func (srv *Server) windowAnswer(r *http.Request, ask wire.WindowAsk) wire.WindowAnswer {
	fail := func(err error) wire.WindowAnswer {
		return wire.WindowAnswer{Error: err.Error(), Code: proto.CodeOf(err)}
	}
	switch {
	case ask.N < 1 || ask.N > proto.MaxWindowItems:
		return fail(proto.ErrWindowCount(strconv.Itoa(ask.N)))
	case ask.Submission < 1:
		return fail(&proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("submission must be a submission's number (1 for the first), not %d", ask.Submission)})
	}
	if ask.Transcript {
		tw, structured, err := srv.sup.Transcript(r.Context(), ask.AgentID, ask.Submission, ask.From, ask.N)
		if err != nil {
			return fail(err)
		}
		return wire.WindowAnswer{Structured: structured, First: tw.First, Total: tw.Total, Entries: tw.Entries, Pending: tw.Pending}
	}
	win, err := srv.sup.Window(r.Context(), ask.AgentID, ask.Submission, ask.From, ask.N)
	if err != nil {
		return fail(err)
	}
	return wire.WindowAnswer{First: win.First, Total: win.Total, Lines: win.Lines}
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

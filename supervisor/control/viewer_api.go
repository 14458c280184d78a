package control

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// The routes a viewer (SPEC §9) uses besides the operations: what it
// draws, fetched a window at a time, so that its cost does not grow with a
// submission's output.
//
//	GET /v1/config                                   the host's settings (ConfigResult)
//	GET /v1/agents/{id}/window?submission=&from=&n=  display lines (WindowResult)
//	GET /v1/agents/{id}/transcript?submission=&from=&n=
//	                                                 transcript entries (TranscriptResult)
//	GET /v1/agents/{id}/search?submission=&q=&from=&transcript=1
//	                                                 matches (proto.SearchResult)
//	GET /v1/agents/{id}/lines?submission=&sgr=1      the display lines as text, for the pager
//
// from < 0 asks for the last n items (the bottom of the log, follow mode).
func (srv *Server) viewerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/config", srv.config)
	mux.HandleFunc("GET /v1/agents/{id}/window", srv.window)
	mux.HandleFunc("GET /v1/agents/{id}/transcript", srv.transcriptWindow)
	mux.HandleFunc("GET /v1/agents/{id}/search", srv.search)
	mux.HandleFunc("GET /v1/agents/{id}/lines", srv.lines)
}

// ConfigResult is the answer of GET /v1/config: the host's settings as a
// viewer needs them.
type ConfigResult struct {
	Config Settings `json:"config"`
	// PresetName and PresetArgs name the preset, if any (SPEC §8).
	PresetName   string `json:"preset_name,omitempty"`
	PresetArgs   string `json:"preset_args,omitempty"`
	PresetFormat string `json:"preset_format,omitempty"`
}

// WindowResult is a range of a submission's display lines: First and Total
// as proto.Window has them, Lines from max(from, First).
type WindowResult struct {
	First int64        `json:"first"`
	Total int64        `json:"total"`
	Lines []proto.Line `json:"lines"`
}

// TranscriptResult is a range of a submission's transcript entries;
// Structured is false when the submission has no transcript.
type TranscriptResult struct {
	Structured bool               `json:"structured"`
	First      int64              `json:"first"`
	Total      int64              `json:"total"`
	Entries    []transcript.Entry `json:"entries"`
	Pending    string             `json:"pending,omitempty"`
}

func (srv *Server) config(w http.ResponseWriter, r *http.Request) {
	cfg := srv.sup.Config()
	res := ConfigResult{Config: SettingsOf(cfg)}
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
	writeJSON(w, http.StatusOK, windowResult(win))
}

// windowResult is win as the wire carries it: "lines": [] for none, as
// /v1 has always answered.
func windowResult(win proto.Window) WindowResult {
	if win.Lines == nil {
		win.Lines = []proto.Line{}
	}
	return WindowResult{First: win.First, Total: win.Total, Lines: win.Lines}
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
	writeJSON(w, http.StatusOK, TranscriptResult{Structured: structured, First: tw.First, Total: tw.Total, Entries: tw.Entries, Pending: tw.Pending})
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

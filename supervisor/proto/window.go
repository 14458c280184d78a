package proto

import (
	"context"

	"github.com/subdash/subdash/supervisor/transcript"
)

// Line is one display line of a submission's output (SPEC §5). Text holds
// printable text and SGR sequences only, and ends with a reset when it holds
// any SGR. Width is its display width in terminal cells, known where the
// line was made (not on the wire: GET /v1/agents/{id}/window carries
// {text, stderr, partial}). The strings are immutable and may be kept by
// the caller.
type Line struct {
	Text    string `json:"text"`
	Width   int    `json:"-"`
	Stderr  bool   `json:"stderr,omitempty"`  // the line came from stderr
	Partial bool   `json:"partial,omitempty"` // the line has no line end yet and may still change
}

// Window is a range of a submission's display lines (Reader.Window).
type Window struct {
	// First is the absolute number of the oldest line still held; lines
	// before it were trimmed from memory and remain in the log file.
	First int64
	// Total is one past the absolute number of the newest line.
	Total int64
	// Lines are the requested lines that are held, starting at
	// max(from, First). The caller owns the slice; the strings are immutable.
	Lines []Line
}

// TranscriptWindow is a range of a structured submission's transcript
// (Reader.Transcript).
type TranscriptWindow struct {
	First, Total int64              // absolute numbers, as for Window
	Entries      []transcript.Entry // caller-owned copies
	Pending      string             // assistant text still streaming, not yet an entry
}

// SearchResult is what Search found: the absolute numbers of the matching
// items in [from, To), in order.
type SearchResult struct {
	Matches []int64 `json:"matches"`
	To      int64   `json:"to"`
}

// WindowRequest names one window of a WindowsReader.Windows call: what
// Reader.Window (or, with Transcript, Reader.Transcript) would be asked
// for submission Submission (≥ 1) of agent AgentID, from From (-1: the
// last N), N items.
type WindowRequest struct {
	AgentID    string
	Submission int
	Transcript bool
	From       int64
	N          int
}

// WindowAnswer is one window of a WindowsReader.Windows call, in the
// order asked: Lines (Window) or, for a Transcript request, Transcript
// (Structured false when the submission has none), or Err, that window's
// own error (the others still come).
type WindowAnswer struct {
	Window     Window
	Transcript TranscriptWindow
	Structured bool
	Err        error
}

// WindowsReader reads several windows in one call (FeatureFollowMany: a
// viewer's tiles, SPEC §7, §9, cost one request a frame whatever their
// number). It may block; the error is the call's (the link, a host
// without the feature), each answer's Err its window's.
type WindowsReader interface {
	Windows(ctx context.Context, reqs []WindowRequest) ([]WindowAnswer, error)
}

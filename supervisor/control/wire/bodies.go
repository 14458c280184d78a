package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// The request bodies of the routes (Routes); spawn's and spawn_agent's is
// proto.SpawnRequest, close-many's proto.CloseManyRequest. A host ignores
// fields it does not know.
type (
	// SendRequest is the body of Send.
	SendRequest struct {
		Message   string `json:"message"`
		Interrupt bool   `json:"interrupt"`
		// Queue keeps the message to start after the running submission
		// (SPEC §11); it excludes Interrupt.
		Queue bool `json:"queue,omitempty"`
		// Steer writes the message into the running submission of an
		// agent that takes messages while it runs (SPEC §11); it excludes
		// Interrupt and Queue.
		Steer bool `json:"steer,omitempty"`
	}
	// ResendRequest is the body of Resend: the latest message again.
	ResendRequest struct {
		Interrupt bool `json:"interrupt"`
		Queue     bool `json:"queue,omitempty"`
	}
	// ApproveRequest is the body of Approve (SPEC §12); an empty
	// RequestID means the oldest pending request.
	ApproveRequest struct {
		RequestID string `json:"request_id"`
		Always    bool   `json:"always"`
	}
	// DenyRequest is the body of Deny (SPEC §12).
	DenyRequest struct {
		RequestID string `json:"request_id"`
		Message   string `json:"message"`
	}
	// AnswerRequest is the body of Answer (SPEC §12 "Questions"): each
	// question, by its text or header ("" for the only one), to the chosen
	// option labels or other text. An empty RequestID means the oldest
	// pending question.
	AnswerRequest struct {
		RequestID string              `json:"request_id"`
		Answers   map[string][]string `json:"answers"`
	}
	// WaitRequest is the body of Wait (SPEC §3 wait).
	WaitRequest struct {
		IDs       []string   `json:"ids"`
		TimeoutMS *TimeoutMS `json:"timeout_ms,omitempty"` // nil: the default
	}
	// MessageRequest is the body of TreeMessage (SPEC §14).
	MessageRequest struct {
		Target  string `json:"target"`
		Message string `json:"message"`
		// Trigger: a follow-up, which starts a submission (followup_task);
		// else a held message (send_message).
		Trigger bool `json:"trigger,omitempty"`
	}
	// TargetRequest is the body of TreeInterrupt (SPEC §14).
	TargetRequest struct {
		Target string `json:"target"`
	}
	// MailboxRequest is the body of TreeWait (SPEC §14).
	MailboxRequest struct {
		TimeoutMS *TimeoutMS `json:"timeout_ms,omitempty"`
		// Ack is the highest item number the caller was handed (0: none).
		Ack uint64 `json:"ack,omitempty"`
	}
)

// FollowRequest is the body of Follow and its answer: the submission
// (1-based) of agent AgentID whose last N display lines (1 to
// proto.MaxWindowItems) the event stream sends with each batch in which
// they changed (EventWindow). An empty AgentID stops it.
type FollowRequest struct {
	AgentID    string `json:"agent_id"`
	Submission int    `json:"submission"`
	N          int    `json:"n"`
}

// TimeoutMS is a wait's timeout_ms as a request carries it: any integral
// JSON number (1e20 included; a value beyond int's range becomes the
// nearest int, which the host clamps as SPEC §3 says), not a fraction.
type TimeoutMS int

// UnmarshalJSON decodes an integral JSON number; a fraction or another
// value is an error saying so.
func (t *TimeoutMS) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || f != math.Trunc(f) {
		return fmt.Errorf("timeout_ms must be a whole number of milliseconds, not %s", b)
	}
	*t = TimeoutMS(proto.TimeoutMS(f))
	return nil
}

// ConfigResult is the answer of Config: the host's settings as a viewer
// needs them.
type ConfigResult struct {
	Config Settings `json:"config"`
	// PresetName, PresetArgs and PresetFormat name the preset, if any
	// (SPEC §8).
	PresetName   string `json:"preset_name,omitempty"`
	PresetArgs   string `json:"preset_args,omitempty"`
	PresetFormat string `json:"preset_format,omitempty"`
}

// WindowResult is the answer of Window: a range of a submission's display
// lines, First and Total as proto.Window has them, Lines from
// max(from, First); never null ("lines": [] for none).
type WindowResult struct {
	First int64        `json:"first"`
	Total int64        `json:"total"`
	Lines []proto.Line `json:"lines"`
}

// WindowOf returns win as the wire carries it.
func WindowOf(win proto.Window) WindowResult {
	if win.Lines == nil {
		win.Lines = []proto.Line{}
	}
	return WindowResult{First: win.First, Total: win.Total, Lines: win.Lines}
}

// Window returns the window w carries.
func (w WindowResult) Window() proto.Window {
	return proto.Window{First: w.First, Total: w.Total, Lines: w.Lines}
}

// TranscriptResult is the answer of Transcript: a range of a submission's
// transcript entries; Structured is false when the submission has none.
type TranscriptResult struct {
	Structured bool               `json:"structured"`
	First      int64              `json:"first"`
	Total      int64              `json:"total"`
	Entries    []transcript.Entry `json:"entries"`
	Pending    string             `json:"pending,omitempty"`
}

// MaxWindows is the most windows one Windows request names.
const MaxWindows = 64

// WindowsRequest is the body of Windows (FeatureFollowMany): up to
// MaxWindows windows, each as Window (or, with Transcript, Transcript)
// would be asked; N is 1 to proto.MaxWindowItems, From -1 for the last N.
type WindowsRequest struct {
	Windows []WindowAsk `json:"windows"`
}

// WindowAsk is one window of a WindowsRequest; Submission is 1-based.
type WindowAsk struct {
	AgentID    string `json:"agent_id"`
	Submission int    `json:"submission"`
	Transcript bool   `json:"transcript,omitempty"`
	From       int64  `json:"from"`
	N          int    `json:"n"`
}

// WindowsResult is the answer of Windows: one WindowAnswer per window
// asked, in the order asked.
type WindowsResult struct {
	Windows []WindowAnswer `json:"windows"`
}

// WindowAnswer is one window of a WindowsResult: lines as WindowResult
// carries them, or entries as TranscriptResult does (for a transcript
// ask), or that window's error alone (Error and Code, as ErrorBody).
type WindowAnswer struct {
	First      int64              `json:"first"`
	Total      int64              `json:"total"`
	Lines      []proto.Line       `json:"lines,omitempty"`
	Structured bool               `json:"structured,omitempty"`
	Entries    []transcript.Entry `json:"entries,omitempty"`
	Pending    string             `json:"pending,omitempty"`
	Error      string             `json:"error,omitempty"`
	Code       proto.ErrorCode    `json:"code,omitempty"`
}

package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MemoSession is what one session file of Memo says about the run that
// wrote it: $MEMO_HOME/sessions/<encoded cwd>/<time>-<session id>.jsonl,
// one JSON event a line (session_start, turn_start, assistant, action,
// observation, final, turn_end, session_end, …). A run of `memo` in plain
// mode writes one such file with its one turn, also with --prev (the
// previous session's turns are replayed into memory, not into the file).
type MemoSession struct {
	// ID is the session's id (sessionId), the file name's tail.
	ID string
	// Message is the input of the last turn (turn_start content).
	Message string
	// Status is the last turn_end's meta.status: "ok", "error",
	// "prompt_limit" or "cancelled"; "" when no turn ended (the run was
	// killed mid-turn).
	Status string
	// Outcome is the run's outcome by SPEC §8: Final once a turn ended,
	// Success for status "ok", Error the turn's error_message (or what a
	// cancelled turn means), Answer the final event's content, the tokens
	// and DurationMS the turn_end's. Plain text, as entries are.
	Outcome Outcome
}

// maxMemoEventBytes bounds one line of a session file that
// ReadMemoSession decodes; a longer line (a tool observation of many
// megabytes) is skipped, since the events it needs are short.
const maxMemoEventBytes = 8 << 20

// memoEvent is the part of a session file event ReadMemoSession reads.
type memoEvent struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionId"`
	Content   json.RawMessage `json:"content"`
	Meta      struct {
		Status       string `json:"status"`
		ErrorMessage string `json:"error_message"`
		DurationMS   int64  `json:"durationMs"`
		Tokens       struct {
			InputTokens  int64 `json:"inputTokens"`
			OutputTokens int64 `json:"outputTokens"`
		} `json:"tokens"`
	} `json:"meta"`
}

// ReadMemoSession reads a session file of Memo (see MemoSession). Lines that
// are not JSON (a torn last line) or too long are skipped; the error is
// the reader's, or one saying the file holds no Memo event at all.
func ReadMemoSession(r io.Reader) (MemoSession, error) {
	var s MemoSession
	br := bufio.NewReaderSize(r, 64<<10)
	events := 0
	var final string
	for {
		line, err := readLimited(br, maxMemoEventBytes)
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var ev memoEvent
			if decode(line, &ev) && ev.Type != "" {
				events++
				s.apply(&ev, &final)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
	}
	if events == 0 {
		return s, errors.New("no Memo session event in the file")
	}
	return s, nil
}

// apply takes one event into s; final is the last final event's content.
func (s *MemoSession) apply(ev *memoEvent, final *string) {
	if ev.SessionID != "" {
		s.ID = plain(ev.SessionID)
	}
	var content string
	_ = json.Unmarshal(ev.Content, &content)
	switch ev.Type {
	case "turn_start":
		s.Message, *final, s.Status = plain(content), "", ""
		s.Outcome = Outcome{}
	case "final":
		*final = plain(content)
	case "turn_end":
		m := ev.Meta
		s.Status = m.Status
		o := Outcome{Final: true, Success: m.Status == "ok", Answer: *final, DurationMS: m.DurationMS,
			InputTokens: m.Tokens.InputTokens, OutputTokens: m.Tokens.OutputTokens}
		if !o.Success {
			o.Error = plain(m.ErrorMessage)
			if m.Status == "cancelled" {
				o.Error, _ = memoFailure(*final)
			}
			if o.Error == "" {
				o.Error = fmt.Sprintf("memo ended the turn with status %q", m.Status)
			}
		}
		s.Outcome = o
	}
}

// readLimited reads one line of br; a line longer than limit comes back
// empty (it was read to its end and dropped).
func readLimited(br *bufio.Reader, limit int) ([]byte, error) {
	var long []byte
	dropped := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case dropped:
		case len(long)+len(chunk) > limit:
			long, dropped = nil, true
		default:
			long = append(long, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return long, err
		}
	}
}

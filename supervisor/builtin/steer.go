package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/transcript"
)

// Steering (SPEC §11 steer): with --input-format stream-json (the host
// sets it through SUBDASH_AGENT_INPUT for the agents it can steer), stdin
// carries one JSON line per message, the task first, and stays open. The
// agent takes every further message between two files of the running
// task (folded: a task it understands runs once the current one is done)
// or, when one arrives after the last task ended, as a next task
// (next_turn). It says each message it takes, and the end of each task,
// in the lines of transcript's built-in protocol (BuiltinTakenLine,
// BuiltinDone, BuiltinFailed), the package the host reads them with.

// inMessage is one message read from stdin in stream-json.
type inMessage struct {
	id, text string
}

// userLine is the stream-json user message, as claude takes it:
// {"type":"user","message":{"role":"user","content":[{"type":"text","text":"…"}]},"uuid":"…"}
// (content may also be a plain string).
type userLine struct {
	Type    string `json:"type"`
	UUID    string `json:"uuid"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// decodeUserLine reads one stream-json user message; an error says what
// the line should be.
func decodeUserLine(line []byte) (inMessage, error) {
	var u userLine
	if err := json.Unmarshal(bytes.TrimSpace(line), &u); err != nil || u.Type != "user" {
		return inMessage{}, errors.New(`with --input-format stream-json each stdin line is {"type":"user","message":{"role":"user","content":"…"}}`)
	}
	var s string
	if json.Unmarshal(u.Message.Content, &s) == nil {
		return inMessage{id: u.UUID, text: s}, nil
	}
	var blocks []struct{ Type, Text string }
	_ = json.Unmarshal(u.Message.Content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return inMessage{id: u.UUID, text: strings.Join(parts, "\n")}, nil
}

// steering is what a run in stream-json takes while it runs.
type steering struct {
	in    <-chan inMessage // further messages, read by a goroutine of their own
	files int              // files visited by the running task
	after []string         // tasks taken during a task, run once it is done
}

// The receipt words of a taken message, as SPEC §11 names them.
const (
	receiptFolded   = "folded"
	receiptNextTurn = "next_turn"
)

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// steered wraps visit so that the messages that came since the last file
// are taken before the next one (folded).
func (p *printer) steered(visit func(file) error) func(file) error {
	st := p.steer
	if st == nil {
		return visit
	}
	return func(f file) error {
		for {
			select {
			case m, ok := <-st.in:
				if !ok {
					st.in = nil
					continue
				}
				where := fmt.Sprintf("after %s, before %s", plural(st.files, "file"), f.display)
				if err := p.take(m, receiptFolded, where); err != nil {
					return err
				}
				continue
			default:
			}
			break
		}
		st.files++
		return visit(f)
	}
}

// take says that m was taken and, when it is a task, keeps it for after
// the running one.
func (p *printer) take(m inMessage, receipt, where string) error {
	p.printf("%s", transcript.BuiltinTakenLine(m.id, receipt, where, sanitize(oneLine(m.text))))
	if p.err != nil {
		return p.err
	}
	text := stripAlso(m.text)
	if _, err := parseTask(text); err != nil {
		p.printf("  not a task I know (%s); going on", strings.Split(err.Error(), ":")[0])
		return p.err
	}
	if receipt == receiptFolded {
		p.steer.after = append(p.steer.after, text)
		p.printf("  it runs once this task is done")
		return p.err
	}
	return p.err
}

// stripAlso drops a leading "also", "and" or "then" from a steered task:
// "also audit tests" is "audit tests".
func stripAlso(s string) string {
	s = strings.TrimSpace(s)
	for _, w := range []string{"also ", "and ", "then "} {
		if len(s) > len(w) && strings.EqualFold(s[:len(w)], w) {
			return strings.TrimSpace(s[len(w):])
		}
	}
	return s
}

// readSteered reads the first stream-json message from stdin as the task,
// runs it, takes what comes while it runs, and then the messages that
// came after it as next tasks, until none is left. The last task's status
// is the run's.
func readSteered(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	r := bufio.NewReaderSize(stdin, 64<<10)
	first, err := readLine(r)
	if err != nil && len(first) == 0 {
		fmt.Fprintf(stderr, "cannot read the task from stdin: %v\n", err)
		return StatusError
	}
	m, err := decodeUserLine(first)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return StatusUsage
	}
	in := make(chan inMessage, 16)
	go func() {
		defer close(in)
		for {
			line, err := readLine(r)
			if len(bytes.TrimSpace(line)) > 0 {
				if m, derr := decodeUserLine(line); derr == nil {
					in <- m
				} else {
					fmt.Fprintf(stderr, "warning: a stdin line was not taken: %v\n", derr)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	st := &steering{in: in}
	cfg.steer = st
	out := &printer{ctx: ctx, w: stdout, pace: cfg.pace, steer: st}
	status := run(ctx, cfg, m.text, stdout, stderr)
	for ctx.Err() == nil {
		if len(st.after) > 0 {
			next := st.after[0]
			st.after = st.after[1:]
			st.files = 0
			status = run(ctx, cfg, next, stdout, stderr)
			continue
		}
		// The task's errors went to stderr, its end goes to stdout: two
		// pipes the host reads apart, so the end waits until the host has
		// taken stderr, and the log shows the error before it.
		waitTaken(stderr, takenWait)
		if out.printf("%s", endLine(status)); out.err != nil {
			return StatusError
		}
		var m inMessage
		var ok bool
		select {
		case m, ok = <-st.in:
		case <-ctx.Done():
		}
		if !ok {
			return status // stdin closed: no more messages
		}
		if err := out.take(m, receiptNextTurn, "as a next task, after the last one ended"); err != nil {
			return StatusError
		}
		if text := stripAlso(m.text); text != "" {
			st.files = 0
			status = run(ctx, cfg, text, stdout, stderr)
		}
	}
	return status
}

// endLine is the line that ends a task whose run returned status: the
// agent then takes more messages until stdin closes (as claude does after
// a result), and the host closes it when no steered message is pending.
func endLine(status int) string {
	if status == StatusOK {
		return transcript.BuiltinDone
	}
	return transcript.BuiltinFailed
}

// takenWait bounds how long the end of a task waits for the host to take
// what the task wrote on stderr (waitTaken).
const takenWait = 5 * time.Second

// readLine reads one line of at most maxTaskSize bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxTaskSize {
			return nil, fmt.Errorf("a stdin line is longer than %d bytes", maxTaskSize)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

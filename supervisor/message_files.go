package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Message returns the whole message of submission seq (1-based; 0 = the
// latest) of agent id, read from its message file beside the log (SPEC
// §10): resend and edit-and-resend send the whole message, never the cut
// copy the journal and the JSON results hold. It does file I/O; call it off
// the UI goroutine. Errors: unknown agent or submission; a message file
// that is gone when only the head of the message is known. A long message
// is better streamed (WriteMessage, Resend).
func (s *Supervisor) Message(ctx context.Context, id string, seq int) (string, error) {
	var b strings.Builder
	if err := s.WriteMessage(ctx, &b, id, seq); err != nil {
		return "", err
	}
	return b.String(), nil
}

// WriteMessage writes the whole message of submission seq (0 = the
// latest) of agent id to w as it reads it from its file (proto.MessageFiles):
// never whole in memory. Errors: those of Message; w's.
func (s *Supervisor) WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error {
	r, err := s.openMessage(id, seq)
	if err != nil {
		return err
	}
	defer r.Close() //nolint:errcheck // read only: its Close cannot lose data
	_, err = io.Copy(w, r)
	return err
}

// SendFrom is Send, or with queue Queue, of the message read from r to its
// end, which goes to a file of the run (ReadMessage), never whole in
// memory (proto.MessageFiles).
func (s *Supervisor) SendFrom(ctx context.Context, id string, r io.Reader, interrupt, queue bool) (proto.SendResult, error) {
	m, err := s.ReadMessage(r)
	if err != nil {
		return proto.SendResult{}, err
	}
	if queue {
		return s.QueueMessage(ctx, id, m)
	}
	return s.SendMessage(ctx, id, m, interrupt)
}

// Resend sends again (queue: queues) the whole message of agent id's latest
// submission, copied from its kept file to the new one (SPEC §10; POST
// /v1/agents/{id}/resend): a 63 MiB message costs the host a copy buffer,
// not 63 MiB. Errors: those of WriteMessage and SendFrom.
func (s *Supervisor) Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	r, err := s.openMessage(id, 0)
	if err != nil {
		return proto.SendResult{}, err
	}
	defer r.Close() //nolint:errcheck // read only: its Close cannot lose data
	return s.SendFrom(ctx, id, r, interrupt, queue)
}

// openMessage opens the whole message of submission seq (0 = the latest)
// of agent id: its kept file, the message not kept yet (launch is about to
// keep it), or the head when that is the whole message.
func (s *Supervisor) openMessage(id string, seq int) (io.ReadCloser, error) {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if seq == 0 {
		seq = len(a.subs)
	}
	if seq < 1 || seq > len(a.subs) {
		s.mu.Unlock()
		if len(a.subs) == 0 {
			return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("agent %s has no submission yet, so no message", a.id)}
		}
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("agent %s has no submission %d; it has %d", a.id, seq, len(a.subs))}
	}
	sub := a.subs[seq-1]
	path, head, pending := sub.msgPath(), sub.message, sub.pending
	s.mu.Unlock()
	cut := strings.Contains(head, "...[truncated: ")
	if path != "" {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) && pending != nil {
			// not kept yet: launch is about to
			b, perr := pending.read()
			if perr == nil {
				return io.NopCloser(bytes.NewReader(b)), nil
			}
			if errors.Is(perr, fs.ErrNotExist) {
				f, err = os.Open(path) // kept meanwhile
			}
		}
		if err == nil {
			return f, nil
		}
		if !cut {
			return io.NopCloser(strings.NewReader(head)), nil
		}
		return nil, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot read the whole message of submission %d of agent %s from %s: %v; only its first %d bytes are known", seq, a.id, path, err, journal.MaxMessageHead)}
	}
	if cut {
		return nil, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("the whole message of submission %d of agent %s was not kept on disk; only its first %d bytes are known", seq, a.id, journal.MaxMessageHead)}
	}
	return io.NopCloser(strings.NewReader(head)), nil
}

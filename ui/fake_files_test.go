package ui

import (
	"context"
	"io"

	"github.com/subdash/subdash/supervisor/proto"
)

// The fake's proto.MessageFiles: the whole message as Message gives it.

// WriteMessage writes the whole message set with setWhole, else the
// snapshot's.
func (f *fakeSup) WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error {
	f.noIO("WriteMessage")
	f.mu.Lock()
	f.record("write message %s", id[:8])
	text, ok := f.whole[id]
	if !ok {
		text = f.find(id).info.LastMessage
	}
	f.mu.Unlock()
	_, err := io.WriteString(w, text)
	return err
}

// SendFrom reads r and sends (queues) what it read, recorded by its length
// and its first 20 bytes.
func (f *fakeSup) SendFrom(ctx context.Context, id string, r io.Reader, interrupt, queue bool) (proto.SendResult, error) {
	f.noIO("SendFrom")
	b, err := io.ReadAll(r)
	if err != nil {
		return proto.SendResult{}, err
	}
	f.mu.Lock()
	f.record("send from %s %d bytes %q interrupt=%v queue=%v", id[:8], len(b), b[:min(len(b), 20)], interrupt, queue)
	f.mu.Unlock()
	return f.sendQuiet(ctx, id, string(b), interrupt, queue)
}

// Resend sends the whole message again, as the host does from its file.
func (f *fakeSup) Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	f.noIO("Resend")
	f.mu.Lock()
	f.record("resend %s interrupt=%v queue=%v", id[:8], interrupt, queue)
	text, ok := f.whole[id]
	if !ok {
		if a := f.find(id); a != nil {
			text = a.info.LastMessage
		}
	}
	f.mu.Unlock()
	return f.sendQuiet(ctx, id, text, interrupt, queue)
}

// sendQuiet is Send or Queue, their records dropped.
func (f *fakeSup) sendQuiet(ctx context.Context, id, text string, interrupt, queue bool) (proto.SendResult, error) {
	var r proto.SendResult
	var err error
	if queue {
		r, err = f.Queue(ctx, id, text)
	} else {
		r, err = f.Send(ctx, id, text, interrupt)
	}
	f.mu.Lock()
	if n := len(f.calls); n > 0 {
		f.calls = f.calls[:n-1]
	}
	f.mu.Unlock()
	return r, err
}

package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// streamHost serves GET /v1/agents/{id}/logs and /lines on a socket with
// stream and write, as the Server does, and returns a client of it.
func streamHost(t *testing.T, write func(io.Writer) error) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	h := func(w http.ResponseWriter, r *http.Request) { stream(w, r, "text/plain", write) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agents/{id}/logs", h)
	mux.HandleFunc("GET /v1/agents/{id}/lines", h)
	hs := &http.Server{Handler: bounded(mux)}
	go func() { _ = hs.Serve(ln) }()
	c := client.NewClient(sock, "")
	t.Cleanup(func() { c.CloseIdleConnections(); _ = hs.Close() })
	return c
}

// TestAStreamThatFailsPartWayIsAFailure: a log or lines stream whose
// writing fails after the answer began is aborted, and the client says
// the answer broke off, keeping what arrived; never a short success. One
// that fails before anything was written is the operation's error.
func TestAStreamThatFailsPartWayIsAFailure(t *testing.T) {
	part := strings.Repeat("a line of the log\n", 10000) // past the first flush
	c := streamHost(t, func(w io.Writer) error {
		if _, err := io.WriteString(w, part); err != nil {
			return err
		}
		return errors.New("cannot read log file /state/x.log: input/output error")
	})
	ctx := context.Background()
	for name, read := range map[string]func(io.Writer) error{
		"logs":  func(w io.Writer) error { return c.WriteLogs(ctx, w, "a", 0, false) },
		"lines": func(w io.Writer) error { return c.WriteLines(ctx, w, "a", 0, true) },
	} {
		var b strings.Builder
		err := read(&b)
		if err == nil || !strings.Contains(err.Error(), "broke the answer off part way") {
			t.Errorf("%s: a stream that failed part way gave %v", name, err)
		}
		if !strings.HasPrefix(part, b.String()) || b.Len() == 0 {
			t.Errorf("%s: kept %d bytes that are not the start of what was sent", name, b.Len())
		}
	}

	c = streamHost(t, func(io.Writer) error { return proto.ErrNotFound("nope") })
	var b strings.Builder
	err := c.WriteLogs(ctx, &b, "nope", 0, false)
	specError(t, err, proto.CodeNotFound, "agent not found: nope")
}

// Package mcpserver is `subdash mcp`: an MCP server on stdio whose tools
// (spawn_agent, send_input, resume_agent, wait, close_agent, list_agents)
// are the operations of SPEC §3, built on github.com/modelcontextprotocol/go-sdk.
//
// It drives the dashboard (or `subdash serve`) found at the control socket
// of its working directory; when none is serving, it supervises the agents
// itself and serves that control socket, so `subdash ctl` works against it.
// stdout carries protocol messages only; notes go to stderr.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/signals"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/host"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// Run serves MCP on stdin and stdout until ctx ends, or stdin closes and
// every request read before is answered (a wait in flight at its end or
// its timeout, see lineConn.drain); then it returns nil. sig, when not nil,
// are the process's signals (signals.Take; ctx is theirs): a signal
// while its own host stops skips the rest of the grace period.
//
// With MEMO_ENABLE_COLLAB_TOOLS=0 it lists no tools and starts nothing.
// Otherwise it resolves o (SPEC §2) and drives the subdash serving the
// control socket of o's working directory, or, when none is serving,
// supervises the agents itself and serves that socket until it returns; it
// then terminates every running submission and removes the socket. It
// writes nothing but protocol messages to stdout; what it does is said on
// stderr. Errors: the configuration's, the control socket's (e.g. a folder
// of another user), and the transport's.
//
// family chooses the tools (FamilySeed, FamilyMultiAgent). The
// multi-agent family acts for one session, whose root mailbox the host
// keeps (SPEC §14): SessionID's.
func Run(ctx context.Context, o supervisor.Options, family Family, stdin io.Reader, stdout, stderr io.Writer, sig *signals.Taken) error {
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		return err
	}
	session := ""
	if family == FamilyMultiAgent {
		session = SessionID(os.Getenv)
	}
	var bs Backends
	if cfg.CollabTools {
		again := func() (backend, error) { return attach(ctx, cfg, family, session, stderr, sig) }
		b, err := again()
		if err != nil {
			return err
		}
		f := newFailover(b, again, stderr)
		defer f.close()
		bs = f
	} else {
		logf(stderr, "subdash mcp: MEMO_ENABLE_COLLAB_TOOLS=0: offering no tools\n")
	}
	return serve(ctx, bs, family, session, stdin, stdout, stderr)
}

// RunVia serves MCP on stdin and stdout as Run does, for the host on
// another machine that client reaches (client.NewClientVia over an ssh
// link, named where): every tool call goes to that host, and when none
// serves there the calls fail saying so; it never supervises agents
// itself (they would run on the wrong machine). collab false
// (MEMO_ENABLE_COLLAB_TOOLS=0) lists no tools. family and the session
// are Run's; a host of another control protocol is refused, saying which
// side to upgrade (client.ProtocolError).
func RunVia(ctx context.Context, cl *client.Client, where string, family Family, collab bool, stdin io.Reader, stdout, stderr io.Writer) error {
	session := ""
	if family == FamilyMultiAgent {
		session = SessionID(os.Getenv)
		cl = cl.WithSession(session)
	}
	var bs Backends
	if collab {
		info, err := cl.Info(ctx)
		if err != nil {
			return err
		}
		logf(stderr, "subdash mcp: driving the subdash (pid %d there) that serves %s on %s: its agent command (%s) and limit (%d running agents) apply\n",
			info.PID, info.Dir, where, info.Command, info.MaxAgents)
		bs = One(cl)
	} else {
		logf(stderr, "subdash mcp: MEMO_ENABLE_COLLAB_TOOLS=0: offering no tools\n")
	}
	return serve(ctx, bs, family, session, stdin, stdout, stderr)
}

// serve runs the MCP transport on stdin and stdout over bs (nil: no
// tools) until stdin closes (nil) or ctx ends.
func serve(ctx context.Context, bs Backends, family Family, session string, stdin io.Reader, stdout, stderr io.Writer) error {
	out := &lockedWriter{w: stdout}
	in := newLineFilter(stdin, out, stderr)
	err := newMCPServer(ctx, bs, family, session).Run(ctx, lineTransport{newLineConn(in, out)})
	if err != nil && ctx.Err() == nil && errors.Is(err, io.EOF) {
		return nil // the client closed stdin: a normal end
	}
	return err
}

// newMCPServer is the server `subdash mcp` serves, whatever its
// transport: family's tools over bs (nil: none) for session, every
// request ended when ctx ends (endWith).
func newMCPServer(ctx context.Context, bs Backends, family Family, session string) *mcp.Server {
	s := NewFamilyServer(family, bs, wire.Version(), session)
	s.AddReceivingMiddleware(endWith(ctx))
	return s
}

// endWith ends the context of every request in flight when end ends (a
// signal). The SDK's Server.Run then closes the session, whose connection
// waits for the requests in flight without cancelling them: a wait would
// hold a process told to stop until its timeout (up to 300 s, SPEC §3).
// Their answers are not written then; the process is ending.
func endWith(end context.Context) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(end, cancel)()
			return next(ctx, method, req)
		}
	}
}

// backend is where the tools' operations go, and how to let go of it.
type backend struct {
	b     Backend
	close func()
}

// attach connects to the subdash serving cfg.Socket, or supervises agents
// in this process and serves the socket when nobody does.
func attach(ctx context.Context, cfg supervisor.Config, family Family, session string, stderr io.Writer, sig *signals.Taken) (backend, error) {
	cl := client.NewClient(cfg.Socket, cfg.Dir).WithOrigin("mcp").WithSession(session)
	remote := func(info proto.Info) backend {
		line := fmt.Sprintf("subdash mcp: driving the subdash (pid %d) that serves %s on %s", info.PID, info.Dir, cfg.Socket)
		if info.Command != "" {
			line += fmt.Sprintf(": its agent command (%s) and limit (%d running agents) apply, not this server's flags", info.Command, info.MaxAgents)
		}
		logf(stderr, "%s\n", line)
		return backend{b: cl, close: func() {}}
	}
	// The client bounds the probe (client.CallTimeout): a host that is
	// stopped or hung gives an error naming its socket and pid instead of
	// an initialize that never answers.
	info, err := cl.Info(ctx)
	if err == nil {
		return remote(info), nil
	}
	var notServing *client.NotServingError
	if !errors.As(err, &notServing) {
		return backend{}, err
	}
	// Where another subdash started serving meanwhile, this server drives
	// it and writes nothing to the state directory (SPEC §10: the records
	// belong to that host).
	h, err := host.Start(cfg, host.Options{Kind: "mcp", Signals: sig})
	if err != nil {
		var inUse *server.InUseError
		if errors.As(err, &inUse) && inUse.NoAnswer == nil {
			return remote(proto.Info{PID: inUse.PID, Dir: inUse.Dir}), nil
		}
		return backend{}, err
	}
	logf(stderr, "subdash mcp: no subdash is serving %s; supervising agents here (agent command %s); control socket %s; logs in %s\n",
		cfg.Dir, cfg.Shown(), h.Socket(), h.Supervisor().RunDir())
	// stderr is the MCP client's log.
	h.Forward(func(w string) { logf(stderr, "subdash mcp: warning: %s\n", w) },
		func(n string) { logf(stderr, "subdash mcp: note: %s\n", n) })
	go func() {
		if err, ok := <-h.Failed(); ok {
			logf(stderr, "subdash mcp: %v\n", err)
		}
	}()
	return backend{b: h.Supervisor(), close: func() {
		for _, err := range host.Each(h.Stop()) {
			logf(stderr, "subdash mcp: %v\n", err)
		}
	}}, nil
}

// SessionID names the multi-agent session of this `subdash mcp` (SPEC
// §14): SUBDASH_MCP_SESSION when set, else the MCP client that started
// it, by its pid and start time, so that a server the same client starts
// again (after a crash, or after its host ended) gets its root mailbox
// back, and two clients on one host never share one.
func SessionID(getenv func(string) string) string {
	if s := strings.TrimSpace(getenv("SUBDASH_MCP_SESSION")); s != "" {
		return s
	}
	ppid := os.Getppid()
	t, _ := local.StartTime(ppid)
	return fmt.Sprintf("mcp-client-%d-%d", ppid, t)
}

// logf writes a line to the MCP client's log, this process's stderr. A
// failed write is dropped: the protocol runs on stdout, and a broken stderr
// leaves no other place to say it.
func logf(stderr io.Writer, format string, a ...any) {
	fmt.Fprintf(stderr, format, a...) //nolint:errcheck // see above
}

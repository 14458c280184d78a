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
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control"
)

// Run serves MCP on stdin and stdout until ctx ends, or stdin closes and
// every request read before is answered (a wait in flight at its end or
// its timeout, see lineConn.drain); then it returns nil.
//
// With MEMO_ENABLE_COLLAB_TOOLS=0 it lists no tools and starts nothing.
// Otherwise it resolves o (SPEC §2) and drives the subdash serving the
// control socket of o's working directory, or, when none is serving,
// supervises the agents itself and serves that socket until it returns; it
// then terminates every running submission and removes the socket. It
// writes nothing but protocol messages to stdout; what it does is said on
// stderr. Errors: the configuration's, the control socket's (e.g. a folder
// of another user), and the transport's.
func Run(ctx context.Context, o supervisor.Options, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		return err
	}
	var ops control.Operations
	if cfg.CollabTools {
		again := func() (backend, error) { return attach(ctx, cfg, stderr) }
		b, err := again()
		if err != nil {
			return err
		}
		f := newFailover(b, again, stderr)
		defer f.close()
		ops = f
	} else {
		fmt.Fprintln(stderr, "subdash mcp: MEMO_ENABLE_COLLAB_TOOLS=0: offering no tools")
	}
	out := &lockedWriter{w: stdout}
	in := newLineFilter(stdin, out, stderr)
	out.cancelled = in.cancelled
	server := NewServer(ops, version())
	server.AddReceivingMiddleware(endWith(ctx))
	err = server.Run(ctx, lineTransport{newLineConn(in, out)})
	if err != nil && ctx.Err() == nil && errors.Is(err, io.EOF) {
		return nil // the client closed stdin: a normal end
	}
	return err
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
	ops   control.Operations
	close func()
}

// attach connects to the subdash serving cfg.Socket, or supervises agents
// in this process and serves the socket when nobody does.
func attach(ctx context.Context, cfg supervisor.Config, stderr io.Writer) (backend, error) {
	client := control.NewClient(cfg.Socket, cfg.Dir).WithOrigin("mcp")
	remote := func(info control.Info) backend {
		fmt.Fprintf(stderr, "subdash mcp: driving the subdash (pid %d) that serves %s on %s", info.PID, info.Dir, cfg.Socket)
		if info.Command != "" {
			fmt.Fprintf(stderr, ": its agent command (%s) and limit (%d running agents) apply, not this server's flags", info.Command, info.MaxAgents)
		}
		fmt.Fprintln(stderr)
		return backend{ops: client, close: func() {}}
	}
	// The client bounds the probe (control.CallTimeout): a host that is
	// stopped or hung gives an error naming its socket and pid instead of
	// an initialize that never answers.
	info, err := client.Info(ctx)
	if err == nil {
		return remote(info), nil
	}
	var notServing *control.NotServingError
	if !errors.As(err, &notServing) {
		return backend{}, err
	}

	// The socket first: where another subdash started serving meanwhile,
	// this server drives it and writes nothing to the state directory
	// (SPEC §10: the records belong to that host).
	sock, err := control.Take(cfg)
	if err != nil {
		var inUse *control.InUseError
		if errors.As(err, &inUse) && inUse.NoAnswer == nil {
			return remote(control.Info{PID: inUse.PID, Dir: inUse.Dir}), nil
		}
		return backend{}, err
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		_ = sock.Close()
		return backend{}, err
	}
	srv := sock.Server(s)
	srv.SetKind("mcp")
	serveCtx, stopServing := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(serveCtx); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "subdash mcp: control socket: %v\n", err)
		}
	}()
	for _, w := range s.Config().Warnings {
		fmt.Fprintf(stderr, "subdash mcp: warning: %s\n", w)
	}
	// Problems found while serving (a failing --notify-command) go to
	// stderr, the MCP client's log.
	warnings := s.Subscribe()
	go func() {
		defer warnings.Close()
		for {
			changes, err := warnings.Next(serveCtx)
			if err != nil {
				return
			}
			for _, c := range changes {
				for _, w := range c.Warnings {
					fmt.Fprintf(stderr, "subdash mcp: warning: %s\n", w)
				}
			}
		}
	}()
	for _, n := range s.Config().Notes {
		fmt.Fprintf(stderr, "subdash mcp: note: %s\n", n)
	}
	fmt.Fprintf(stderr, "subdash mcp: no subdash is serving %s; supervising agents here (agent command %s); control socket %s; logs in %s\n",
		cfg.Dir, cfg.Shown(), srv.Path(), s.RunDir())
	return backend{ops: control.LocalAs(s, "mcp"), close: func() {
		// Agents first: a wait in progress on the socket then answers
		// with their final statuses before the socket closes.
		shutdown(s, stderr)
		stopServing()
		<-served
	}}, nil
}

// shutdown terminates every running submission (SPEC §4).
func shutdown(s *supervisor.Supervisor, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "subdash mcp: shutdown: %v\n", err)
	}
}

// version is the module version of this binary, "(devel)" for a local build.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// errServerClosing is the cause of the requests' context when the server
// closes.
var errServerClosing = errors.New("control socket closed")

// maxBody bounds every request body as it is read, in bytes (SPEC §6):
// 80 MiB, room for a JSON message of proto.MaxMessageBytes of text whose
// line ends, tabs and quotes JSON escapes, and the rest of the request. A
// JSON body is decoded whole, so this bounds what one request can make
// the host hold; a message that escapes to more (control characters)
// goes as a text/plain body, streamed to its file, as the clients send
// every long message. A variable only so that a test can lower it.
var maxBody int64 = proto.MaxMessageBytes + proto.MaxMessageBytes/4

// Server serves the control socket of one supervisor (SPEC §6): HTTP/1.1
// with JSON bodies on a Unix socket in a 0700 folder, mode 0600, for
// connections of the same user only. Create it with Take and
// Socket.Server (or Listen), run it with Serve, end it with Close.
type Server struct {
	sup  Engine
	ln   *peerListener
	http *http.Server

	// ctx is the base context of every request; Close cancels it, which
	// ends waits at once. streams ends event streams.
	ctx        context.Context
	cancel     context.CancelCauseFunc
	streams    context.Context
	endStreams context.CancelFunc

	closeOnce sync.Once
	closeErr  error
	waiting   atomic.Int64 // wait requests in progress (tests observe it)
	viewers   atomic.Int64 // event streams of attached viewers
	follows   sync.Map     // stream name → *follow, the streams opened with window=1
	kind      atomic.Value // string: what the host is, for Info
}

// SetKind says what serves the socket ("dashboard", "serve", "mcp"), as
// GET /v1/info reports it to viewers ("attached to subdash serve, pid N").
func (srv *Server) SetKind(kind string) { srv.kind.Store(kind) }

// Viewers returns how many viewers (SPEC §9) are attached now.
func (srv *Server) Viewers() int { return int(srv.viewers.Load()) }

// Waiting returns how many wait requests (SPEC §3) are in progress now.
func (srv *Server) Waiting() int { return int(srv.waiting.Load()) }

// Socket is a control socket taken for a working directory (SPEC §6: one
// host per directory) that serves nothing yet. A host takes it before it
// creates its supervisor, so that a start refused because another subdash
// serves the directory writes nothing to the state directory (no run, no
// journal, no orphan sweep: SPEC §10's records belong to the live host).
// Connections made meanwhile wait in the socket's backlog. Serve it with
// Server, or let it go with Close.
type Socket struct{ ln *peerListener }

// Take takes the control socket cfg.Socket for working directory cfg.Dir
// (cfg as supervisor.Resolve returns it). It creates the socket's folder
// with mode 0700 (or tightens an existing folder of subdash's own),
// replaces a stale socket file, and refuses with *InUseError while another
// subdash serves the socket, also one that does not answer (stopped or
// hung). A folder or a holder that the rule of trust refuses (SPEC §6: a
// folder of another user, or one others may write in, a socket another
// user serves) gives *socket.UntrustedError; other errors name the path
// and what to do: a path that is not a socket, a path too long.
//
// A second host of the same directory and state directory on another
// socket is refused with *HostedElsewhereError (see hostLock).
func Take(cfg supervisor.Config) (*Socket, error) {
	ln, err := listenUnix(cfg.Socket, cfg.Dir, os.Geteuid())
	if err != nil {
		return nil, err
	}
	if ln.host, err = lockHost(cfg.StateDir, cfg.Dir, cfg.Socket); err != nil {
		ln.Close() //nolint:errcheck // the refused lock is the error to report
		return nil, err
	}
	return &Socket{ln: ln}, nil
}

// Path returns the control socket path.
func (sk *Socket) Path() string { return sk.ln.Addr().String() }

// Server returns the server of the engine e (a *supervisor.Supervisor) on
// this socket; run it with Serve and end it with Close (which closes the
// socket).
func (sk *Socket) Server(e Engine) *Server { return newServer(e, sk.ln) }

// Close lets the socket go without serving it (the supervisor could not be
// created): its file is removed, so the next start finds nothing stale.
func (sk *Socket) Close() error {
	if err := sk.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("cannot close control socket %s: %v", sk.Path(), err)
	}
	return nil
}

// Listen is Take and Server in one, for a supervisor that exists already
// (tests, and programs that keep no records). A host takes the socket with
// Take before it creates its supervisor instead: a supervisor has written
// its run to the state directory by the time Listen could refuse.
func Listen(s *supervisor.Supervisor) (*Server, error) {
	sk, err := Take(s.Config())
	if err != nil {
		return nil, err
	}
	return sk.Server(s), nil
}

func newServer(e Engine, ln *peerListener) *Server {
	srv := &Server{sup: e, ln: ln}
	if ln.host != nil {
		e.WhenStateRemade(ln.host.retake) // the lock went with the state directory
	}
	srv.ctx, srv.cancel = context.WithCancelCause(context.Background())
	srv.streams, srv.endStreams = context.WithCancel(context.Background())
	srv.http = &http.Server{
		Handler:           srv.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return srv.ctx },
		ConnContext:       withPeer,
	}
	return srv
}

// Path returns the control socket path.
func (srv *Server) Path() string { return srv.ln.Addr().String() }

// Serve answers requests until ctx ends or Close is called, then closes the
// server (see Close). It returns ctx's error when ctx ended, nil after
// Close, and the listener's error when accepting failed.
func (srv *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.http.Serve(srv.ln) }()
	select {
	case <-ctx.Done():
		_ = srv.Close()
		<-errc //nolint:errcheck // http.ErrServerClosed: the cause is ctx's
		return ctx.Err()
	case err := <-errc:
		_ = srv.Close()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Close stops listening, ends requests in progress, and removes the socket
// file. It is safe to call more than once and from any goroutine.
//
// Event streams end. When the supervisor was shut down first
// (Supervisor.Shutdown returned), every agent is final, so each wait in
// progress (or accepted and not read yet) answers with the final statuses
// before the socket closes, as SPEC §3 has wait return when an id becomes
// final. Otherwise a wait in progress gets the error "control socket closed:
// subdash stopped serving …" (code "shutdown").
func (srv *Server) Close() error {
	srv.closeOnce.Do(func() {
		cause := fmt.Errorf("%w: subdash stopped serving %s before the operation finished", errServerClosing, srv.Path())
		defer srv.cancel(cause)
		srv.endStreams()
		select {
		case <-srv.sup.Stopped():
			// Every agent is final: the requests in progress, and those
			// accepted but not read yet, answer at once in the graceful
			// shutdown below.
		default:
			srv.cancel(cause)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.http.Shutdown(ctx); err != nil {
			_ = srv.http.Close()
		}
		// Shutdown closes the listener only when Serve ran. Closing a
		// *net.UnixListener unlinks its socket file before it closes the
		// socket, and only once: no later remove by path, which could
		// delete the live socket of a successor that started meanwhile.
		if err := srv.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			srv.closeErr = fmt.Errorf("cannot close control socket %s: %v", srv.Path(), err)
		}
	})
	return srv.closeErr
}

// routes returns the handler of the control socket's HTTP API: a handler
// for each route of wire.Routes (handlers), its body bounded.
func (srv *Server) routes() http.Handler {
	mux := http.NewServeMux()
	hs := srv.handlers()
	for _, rt := range wire.Routes {
		h, ok := hs[rt]
		if !ok {
			panic("server: no handler for " + rt.Pattern())
		}
		mux.HandleFunc(rt.Pattern(), h)
		delete(hs, rt)
	}
	for rt := range hs {
		panic("server: a handler for " + rt.Pattern() + ", which wire.Routes lacks")
	}
	return bounded(mux)
}

// handlers returns the handler of each route.
func (srv *Server) handlers() map[wire.Route]http.HandlerFunc {
	return map[wire.Route]http.HandlerFunc{
		wire.Info: srv.info, wire.Config: srv.config, wire.List: srv.list,
		wire.Spawn: srv.spawn, wire.Send: srv.send, wire.Resend: srv.resend, wire.Message: srv.message,
		wire.Interrupt: srv.interrupt, wire.Close: srv.closeAgent, wire.CloseMany: srv.closeMany,
		wire.Resume: srv.resume, wire.Forget: srv.forget, wire.Seen: srv.seen, wire.CancelQueue: srv.cancelQueue,
		wire.Approve: srv.approve, wire.Deny: srv.deny, wire.Answer: srv.answer, wire.Wait: srv.wait,
		wire.Logs: srv.logs, wire.Window: srv.window, wire.Transcript: srv.transcriptWindow, wire.Windows: srv.windows, wire.LogSearch: srv.search,
		wire.Lines: srv.lines, wire.Diff: srv.diff, wire.Search: srv.searchAgents,
		wire.Events: srv.events, wire.Follow: srv.setFollow,
		wire.TreeSpawn: srv.treeSpawn, wire.TreeMessage: srv.treeMessage, wire.TreeInterrupt: srv.treeInterrupt,
		wire.TreeWait: srv.treeWait, wire.TreeList: srv.treeList,
	}
}

// bounded bounds the body of every request to h at maxBody bytes as it is
// read (http.MaxBytesReader): a longer one fails its read, which decode
// answers with 413, and nothing reads it further. Every answer names the
// protocol (wire.ProtocolHeader).
func bounded(h http.Handler) http.Handler {
	protocol := strconv.Itoa(wire.Protocol)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(wire.ProtocolHeader, protocol)
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	})
}

func (srv *Server) info(w http.ResponseWriter, r *http.Request) {
	cfg := srv.sup.Config()
	kind, _ := srv.kind.Load().(string)
	logs, err := srv.sup.Storage(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	spend := srv.sup.Spend()
	writeJSON(w, http.StatusOK, proto.Info{
		PID: os.Getpid(), Dir: cfg.Dir, Socket: srv.Path(), Command: cfg.Shown(),
		MaxAgents: cfg.MaxAgents, RunDir: srv.sup.RunDir(), Logs: logs, Restored: srv.sup.Restored(),
		Protocol: wire.Protocol, Kind: kind, Viewers: srv.Viewers(), Features: proto.HostFeatures(),
		Failure: srv.sup.Failure(), Warnings: cfg.Warnings, Spend: &spend,
	})
}

func (srv *Server) list(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.List(r.Context())
	if err != nil {
		reply(w, r, http.StatusOK, res, err)
		return
	}
	writeList(w, res)
}

// seen records that a dashboard shows agent id: it no longer needs you
// (SPEC §11). It answers the agent's id and status.
func (srv *Server) seen(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.MarkSeen(srv.caller(r), r.PathValue("id"))
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) cancelQueue(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.CancelQueue(srv.caller(r), r.PathValue("id"))
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) interrupt(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.Interrupt(srv.caller(r), r.PathValue("id"))
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) closeAgent(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.Close(srv.caller(r), r.PathValue("id"))
	reply(w, r, http.StatusOK, res, err)
}

// closeMany closes the agents the body selects (proto.CloseManyRequest):
// {"all":true}, {"status":"running"} or {"agent_ids":[…]}.
func (srv *Server) closeMany(w http.ResponseWriter, r *http.Request) {
	var req proto.CloseManyRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := srv.sup.CloseMany(srv.caller(r), req)
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) resume(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.Resume(srv.caller(r), r.PathValue("id"))
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) forget(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.Forget(srv.caller(r), r.PathValue("id"))
	reply(w, r, http.StatusOK, res, err)
}

// message answers the whole message of a submission as plain text.
func (srv *Server) message(w http.ResponseWriter, r *http.Request) {
	seq, ok := submissionParam(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	stream(w, r, "text/plain; charset=utf-8", func(w io.Writer) error { return srv.sup.WriteMessage(r.Context(), w, id, seq) })
}

// submissionParam reads the query's submission number (0 when absent); on
// a bad one it answers 400 and returns false.
func submissionParam(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.URL.Query().Get("submission")
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		writeError(w, &proto.Error{Code: proto.CodeInvalid,
			Message: fmt.Sprintf("submission must be a sequence number (1, 2, …), not %q", v)})
		return 0, false
	}
	return n, true
}

// approve answers a tool permission request with allow (SPEC §12).
func (srv *Server) approve(w http.ResponseWriter, r *http.Request) {
	var req wire.ApproveRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := srv.sup.Approve(r.Context(), r.PathValue("id"), req.RequestID, req.Always)
	reply(w, r, http.StatusOK, res, err)
}

// deny answers a tool permission request with deny (SPEC §12).
func (srv *Server) deny(w http.ResponseWriter, r *http.Request) {
	var req wire.DenyRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := srv.sup.Deny(r.Context(), r.PathValue("id"), req.RequestID, req.Message)
	reply(w, r, http.StatusOK, res, err)
}

// answer answers an agent's pending question (SPEC §12 "Questions").
func (srv *Server) answer(w http.ResponseWriter, r *http.Request) {
	var req wire.AnswerRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := srv.sup.Answer(proto.WithOrigin(r.Context(), r.Header.Get(wire.OriginHeader)), r.PathValue("id"), req.RequestID, req.Answers)
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) wait(w http.ResponseWriter, r *http.Request) {
	var req wire.WaitRequest
	if !decode(w, r, &req) {
		return
	}
	srv.waiting.Add(1)
	defer srv.waiting.Add(-1)
	// r.Context() ends when the client disconnects or the server closes,
	// and Wait stops waiting at once.
	res, err := srv.sup.Wait(srv.caller(r), req.IDs, (*int)(req.TimeoutMS))
	reply(w, r, http.StatusOK, res, err)
}

// decode reads a JSON request body (bounded: routes) into v; on failure it
// answers 400, or 413 for a body over maxBody, and returns false. An
// empty body decodes as {}.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body := r.Body
	dec := json.NewDecoder(body)
	// Unknown fields are ignored: a newer client may send more (the
	// protocol grows additively within /v1).
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, &proto.Error{Code: proto.CodeTooLarge, Message: fmt.Sprintf(
				"request body longer than %d bytes; a message may be at most %d bytes (64 MiB): send a long message as a text/plain body (feature text-message), or put the task in a file and send its path",
				maxBody, proto.MaxMessageBytes)})
			return false
		}
		writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: "invalid request body: " + err.Error()})
		return false
	}
	// Read the body to its end: net/http notices a client that goes away
	// (and cancels the request's context, which ends a wait) only once the
	// body reached EOF, and the decoder stops at the closing brace.
	_, _ = io.Copy(io.Discard, body)
	return true
}

// reply writes res with status, or err as an error response. When the
// request's context ended (the client went away, or the server is
// closing), there is nobody to answer.
func reply(w http.ResponseWriter, r *http.Request, status int, res any, err error) {
	if err != nil {
		if r.Context().Err() != nil {
			if cause := context.Cause(r.Context()); errors.Is(cause, errServerClosing) {
				writeError(w, &proto.Error{Code: proto.CodeShutdown, Message: cause.Error()})
			}
			return
		}
		writeError(w, err)
		return
	}
	writeJSON(w, status, res)
}

func writeError(w http.ResponseWriter, err error) {
	code := proto.CodeOf(err)
	writeJSON(w, wire.Status(code), wire.ErrorBody{Error: err.Error(), Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(wire.Marshal(v), '\n'))
}

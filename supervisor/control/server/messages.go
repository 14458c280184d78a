package server

import (
	"context"
	"mime"
	"net/http"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

func (srv *Server) spawn(w http.ResponseWriter, r *http.Request) {
	var req proto.SpawnRequest
	if isText(r) {
		req.TaskName = r.URL.Query().Get("task_name")
	} else if !decode(w, r, &req) {
		return
	}
	if err := srv.sup.CheckNesting(peerPID(r.Context())); err != nil {
		writeError(w, err)
		return
	}
	m, err := srv.messageOf(r, req.Message)
	if err != nil {
		writeError(w, err)
		return
	}
	origin := r.Header.Get(wire.OriginHeader)
	if origin == "" {
		origin = "a program"
	}
	res, err := srv.sup.SpawnMessage(proto.WithOrigin(srv.caller(r), origin), m, req.TaskName)
	reply(w, r, http.StatusCreated, res, err)
}

func (srv *Server) send(w http.ResponseWriter, r *http.Request) {
	var req wire.SendRequest
	if isText(r) {
		q := r.URL.Query()
		req.Interrupt, req.Queue = flagParam(q.Get("interrupt")), flagParam(q.Get("queue"))
		req.Steer = flagParam(q.Get("steer"))
	} else if !decode(w, r, &req) {
		return
	}
	if !srv.checkSend(w, r, req.Interrupt, req.Queue) {
		return
	}
	if req.Steer && (req.Queue || req.Interrupt) {
		writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: "steer excludes queue and interrupt: steer writes the message into the running submission; set one"})
		return
	}
	m, err := srv.messageOf(r, req.Message)
	if err != nil {
		writeError(w, err)
		return
	}
	var res proto.SendResult
	switch {
	case req.Steer:
		res, err = srv.sup.SteerMessage(srv.caller(r), r.PathValue("id"), m)
	case req.Queue:
		res, err = srv.sup.QueueMessage(srv.caller(r), r.PathValue("id"), m)
	default:
		res, err = srv.sup.SendMessage(srv.caller(r), r.PathValue("id"), m, req.Interrupt)
	}
	reply(w, r, http.StatusOK, res, err)
}

// resend sends the agent's latest message again from its kept file
// (FeatureResendFile): the message never crosses the socket.
func (srv *Server) resend(w http.ResponseWriter, r *http.Request) {
	var req wire.ResendRequest
	if !decode(w, r, &req) {
		return
	}
	if !srv.checkSend(w, r, req.Interrupt, req.Queue) {
		return
	}
	res, err := srv.sup.Resend(srv.caller(r), r.PathValue("id"), req.Interrupt, req.Queue)
	reply(w, r, http.StatusOK, res, err)
}

// checkSend answers the errors a send or resend request can have before
// anything is done (the nesting check; queue with interrupt) and reports
// whether there was none.
func (srv *Server) checkSend(w http.ResponseWriter, r *http.Request, interrupt, queue bool) bool {
	if err := srv.sup.CheckNesting(peerPID(r.Context())); err != nil {
		writeError(w, err)
		return false
	}
	if queue && interrupt {
		writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: "queue and interrupt exclude each other: queue waits for the running submission, interrupt cancels it; set one"})
		return false
	}
	return true
}

// isText reports a request whose body is the message itself
// (FeatureTextMessage): Content-Type text/plain.
func isText(r *http.Request) bool {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && t == "text/plain"
}

// flagParam reads a query flag: "1" or "true" sets it.
func flagParam(v string) bool { return v == "1" || v == "true" }

// messageOf returns the message of a spawn or send request: a text/plain
// body streamed to a file of the run (supervisor.ReadMessage), never whole
// in memory, or the JSON body's message.
func (srv *Server) messageOf(r *http.Request, jsonMessage string) (*supervisor.Message, error) {
	if isText(r) {
		return srv.sup.ReadMessage(r.Body)
	}
	return supervisor.NewMessage(jsonMessage)
}

// caller returns r's context naming who makes the request (SPEC §14): the
// agent whose running submission holds the calling process, found from
// the connection's peer credentials as SPEC §6 nesting finds it, and the
// multi-agent session the request names (wire.SessionHeader).
func (srv *Server) caller(r *http.Request) context.Context {
	return proto.WithCaller(r.Context(), proto.Caller{
		AgentID: srv.sup.CallerAgent(peerPID(r.Context())),
		Session: r.Header.Get(wire.SessionHeader),
	})
}

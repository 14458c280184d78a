package server

import (
	"context"
	"net/http"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// The routes of the multi-agent family (SPEC §14, FeatureMultiAgent): what
// `subdash mcp --tools multi-agent` calls when another subdash hosts. Each
// acts for the caller the request names: the session of wire.SessionHeader and
// the agent whose submission holds the calling process. Targets resolve as
// Memo's registry does (no id prefixes).

// treeCaller is caller for the multi-agent family: targets exact.
func (srv *Server) treeCaller(r *http.Request) context.Context {
	ctx := srv.caller(r)
	c := proto.CallerOf(ctx)
	c.Exact = true
	return proto.WithCaller(ctx, c)
}

func (srv *Server) treeSpawn(w http.ResponseWriter, r *http.Request) {
	var req proto.SpawnRequest
	if !decode(w, r, &req) {
		return
	}
	if err := srv.sup.CheckNesting(peerPID(r.Context())); err != nil {
		writeError(w, err)
		return
	}
	res, err := srv.sup.SpawnTree(proto.WithOrigin(srv.treeCaller(r), "mcp"), req.Message, req.TaskName)
	reply(w, r, http.StatusCreated, res, err)
}

func (srv *Server) treeMessage(w http.ResponseWriter, r *http.Request) {
	var req wire.MessageRequest
	if !decode(w, r, &req) {
		return
	}
	if err := srv.sup.CheckNesting(peerPID(r.Context())); err != nil {
		writeError(w, err)
		return
	}
	res, err := srv.sup.MessageAgent(srv.treeCaller(r), req.Target, req.Message, req.Trigger)
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) treeInterrupt(w http.ResponseWriter, r *http.Request) {
	var req wire.TargetRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := srv.sup.InterruptAgent(srv.treeCaller(r), req.Target)
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) treeWait(w http.ResponseWriter, r *http.Request) {
	var req wire.MailboxRequest
	if !decode(w, r, &req) {
		return
	}
	srv.waiting.Add(1)
	defer srv.waiting.Add(-1)
	res, err := srv.sup.WaitMailbox(srv.treeCaller(r), (*int)(req.TimeoutMS), req.Ack)
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) treeList(w http.ResponseWriter, r *http.Request) {
	res, err := srv.sup.ListTree(srv.treeCaller(r), r.URL.Query().Get("path_prefix"))
	reply(w, r, http.StatusOK, res, err)
}

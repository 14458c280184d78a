package control

import (
	"context"
	"net/http"

	"github.com/subdash/subdash/supervisor/proto"
)

// The routes of the multi-agent family (SPEC §14, FeatureMultiAgent): what
// `subdash mcp --tools multi-agent` calls when another subdash hosts. Each
// acts for the caller the request names: the session of SessionHeader and
// the agent whose submission holds the calling process. Targets resolve as
// Memo's registry does (no id prefixes).
//
//	POST /v1/multi-agent/spawn      {message, task_name}          proto.TreeAgent
//	POST /v1/multi-agent/message    {target, message, trigger}    proto.TreeAgent (the receiver)
//	POST /v1/multi-agent/interrupt  {target}                      proto.TreeAgent (its status before)
//	POST /v1/multi-agent/wait       {timeout_ms, ack}             proto.MailboxResult
//	GET  /v1/multi-agent/agents?path_prefix=P                     proto.TreeList
func (srv *Server) treeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/multi-agent/spawn", srv.treeSpawn)
	mux.HandleFunc("POST /v1/multi-agent/message", srv.treeMessage)
	mux.HandleFunc("POST /v1/multi-agent/interrupt", srv.treeInterrupt)
	mux.HandleFunc("POST /v1/multi-agent/wait", srv.treeWait)
	mux.HandleFunc("GET /v1/multi-agent/agents", srv.treeList)
}

// Request bodies of the multi-agent routes.
type (
	treeSpawnRequest struct {
		Message  string `json:"message"`
		TaskName string `json:"task_name"`
	}
	treeMessageRequest struct {
		Target  string `json:"target"`
		Message string `json:"message"`
		// Trigger: a follow-up, which starts a submission (followup_task);
		// else a held message (send_message).
		Trigger bool `json:"trigger,omitempty"`
	}
	treeTargetRequest struct {
		Target string `json:"target"`
	}
	treeWaitRequest struct {
		TimeoutMS *timeoutMS `json:"timeout_ms,omitempty"`
		// Ack is the highest item number the caller was handed (0: none).
		Ack uint64 `json:"ack,omitempty"`
	}
)

// treeCaller is caller for the multi-agent family: targets exact.
func (srv *Server) treeCaller(r *http.Request) context.Context {
	ctx := srv.caller(r)
	c := proto.CallerOf(ctx)
	c.Exact = true
	return proto.WithCaller(ctx, c)
}

func (srv *Server) treeSpawn(w http.ResponseWriter, r *http.Request) {
	var req treeSpawnRequest
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
	var req treeMessageRequest
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
	var req treeTargetRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := srv.sup.InterruptAgent(srv.treeCaller(r), req.Target)
	reply(w, r, http.StatusOK, res, err)
}

func (srv *Server) treeWait(w http.ResponseWriter, r *http.Request) {
	var req treeWaitRequest
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

// Package control gives programs the operations of the dashboard (SPEC §3)
// on the same supervisor: the control socket of SPEC §6 (Server), its
// client (Client, which implements the roles of package proto over the
// socket), a viewer's backend (Remote, SPEC §9), and the `subdash ctl`
// command line. Its imports: the engine, whose socket Server serves, and
// proto, the contract every answer is made of (testdata/wire.golden pins
// the JSON names of /v1: additive only).
//
// The socket speaks HTTP/1.1 with JSON bodies on a Unix socket whose folder
// is mode 0700 and which is itself mode 0600; a connection from another
// user is answered 403 and closed (SO_PEERCRED). Routes:
//
//	GET  /v1/info                       proto.Info about the serving process
//	GET  /v1/agents                     list         → proto.ListResult
//	POST /v1/agents {message}           spawn        → proto.SpawnResult (201)
//	POST /v1/agents/{id}/send {message, interrupt, queue}
//	                                    send (queue: supervisor.Queue, SPEC §11)
//	                                                 → proto.SendResult
//	POST /v1/agents/{id}/interrupt      interrupt    → proto.StatusResult
//	POST /v1/agents/{id}/close          close        → proto.StatusResult
//	POST /v1/agents/{id}/resume         resume       → proto.StatusResult
//	POST /v1/agents/{id}/seen           a dashboard shows it: it no longer
//	                                    needs you (SPEC §11) → proto.StatusResult
//	DELETE /v1/agents/{id}/queue        cancel its queued message
//	                                                 → proto.StatusResult
//	POST /v1/wait {ids, timeout_ms}     wait         → proto.WaitResult
//	GET  /v1/agents/{id}/logs[?submission=N]
//	                                    logs         → text/plain
//	GET  /v1/events                     server-sent events: "agent" events
//	                                    carrying a proto.AgentInfo, one per
//	                                    agent at first, then one per change
//
// and those a viewer draws with (viewer_api.go).
//
// An error answers {"error": "<the spec's message>", "code": "<ErrorCode>"}
// with a fitting status (400 invalid, 404 not_found, 409 busy, closed,
// not_running and no_queue, 429 limit, 503 shutdown, 403 another user); Client turns it
// back into *proto.Error, so every caller prints the same text. A wait
// whose client disconnects stops waiting at once.
package control

// Package proto is the contract between the supervisor and its front-ends:
// the value types, errors and events that the dashboard (ui), the control
// socket (control: its server, client, viewer backend and `subdash ctl`)
// and the MCP server (mcpserver) share, and the small role interfaces they
// compose. Everything here is data a front-end may hold, copy and send on
// the wire; nothing here runs a process or touches a file.
//
// What lives here:
//
//   - the results of the operations of SPEC §3 (Summary, SpawnResult,
//     SendResult, StatusResult, WaitResult, ListResult), with their JSON
//     names, and the snapshots a dashboard draws (AgentInfo,
//     SubmissionInfo, OutputCounts, Window, TranscriptWindow,
//     SearchResult, Storage, PendingApproval, Attention);
//   - Error, its codes and one constructor per error text SPEC §3 fixes
//     (ErrNotFound, ErrBusy, …), so that no caller retypes a text;
//   - Change and Feed, the coalescing event path from a supervisor (or a
//     viewer's client) to its subscribers;
//   - Info, the answer of GET /v1/info, and its feature words.
//
// Who imports it: the engine (package supervisor) implements the contract;
// ui, control and mcpserver import this package, and ui imports nothing of
// the engine (SPEC §9: the host dashboard and a viewer run the same ui
// code). proto itself imports no subdash package but transcript, whose
// Entry is what a transcript window holds.
package proto

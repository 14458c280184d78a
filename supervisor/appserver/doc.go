// Package appserver speaks the protocol of `codex app-server` (JSON-RPC 2.0
// without the "jsonrpc" field, one message a line on stdio; experimental
// in codex 0.171.0) for the codex preset (SPEC §8): one app-server process
// per submission, driven by a Driver that writes its requests on stdin and
// reads its stdout lines. The message shapes (protocol.go) are those of
// `codex app-server generate-json-schema`; the order below is what codex
// 0.171.0 did against a local model server
// (testdata/agent-streams/codex-app-server-*.jsonl):
//
//	→ initialize {clientInfo, capabilities.optOutNotificationMethods}   ← its result
//	→ initialized
//	→ thread/start {approvalPolicy}  or  thread/resume {threadId, …}   ← {thread: {id}}
//	→ turn/start {threadId, input, clientUserMessageId}                ← {turn: {id}}
//	← turn/started, item/started and item/completed of each item
//	  (userMessage, reasoning, commandExecution, fileChange, agentMessage, …),
//	  thread/tokenUsage/updated after each model call, error (willRetry)
//	← turn/completed {turn: {status: completed | failed | interrupted, error}}
//
// What subdash relies on, each seen with 0.171.0:
//
//   - The thread id comes with thread/start's answer, before any model
//     call, and thread/resume continues it in a later process (after a
//     host killed with SIGKILL too); it is the agent's session id.
//   - A turn/steer while a turn runs is answered {turnId} and taken at the
//     turn's next step as a userMessage item whose clientId is the id
//     subdash gave (steer.go).
//   - turn/interrupt ends the turn (turn/completed, status interrupted)
//     with no further model call, but leaves its running commands alive
//     while the app-server lives. The end of stdin ends the app-server
//     within a tenth of a second, and its commands with it (those run in
//     codex's sandbox die with their bwrap parent; the others are ended by
//     the app-server). So a stop interrupts the turn, waits for its end,
//     then closes stdin; anything left is the engine's to terminate (its
//     process group, and the escapees that still carry
//     SUBDASH_SUBMISSION_ID). A command's processId is codex's own handle
//     of it, not an OS process id: it names no process group.
//   - A model server that cannot be reached is retried for ever ("error"
//     notifications with willRetry, "Reconnecting... waiting for
//     network"), whatever the provider's retry settings; an HTTP error is
//     a failed turn with its message.
//
// Request ids are strings that name the request (ids.go), so the log file
// alone says what each answer answers.
package appserver

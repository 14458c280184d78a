// Package client is the far side of the control socket (SPEC §6): Client,
// which calls each route of package wire and implements the roles of
// package proto over the socket (what `subdash ctl`, `subdash mcp` driving
// another host and a built-in agent's split use), and Remote, a viewer's
// backend (SPEC §9), which embeds a Client and adds what the host pushes:
// the agents' snapshots and the windows of the submission it follows.
//
// Every call is bounded (SPEC §6: clients never hang): CallTimeout, a
// wait's timeout plus WaitMargin, a stream CallTimeout without progress,
// counted in the time this process ran; a silent host is probed
// (ProbeTimeout) before it is called hung. Errors are *proto.Error with
// the host's text, or this package's: *NotServingError, *NoAnswerError,
// *StoppedError, *IncompatibleError.
//
// It imports no engine package, only the contract (proto, wire) and the
// rule of trust (socket).
package client

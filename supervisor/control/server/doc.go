// Package server serves the control socket of SPEC §6 over the engine: a
// handler for each route of package wire (Server.routes), over Engine,
// the interface of what it needs that it declares itself and
// *supervisor.Supervisor implements. It takes the socket for a working
// directory (Take: the rule of trust, one host per directory, the host
// lock), refuses connections of other users (SO_PEERCRED), and runs the
// far end of an ssh link (Bridge). Its answers and events are wire's
// types; its client is package client's.
//
// A wait whose client disconnects stops waiting at once; a streamed
// answer that fails after it began is cut off, never a short success.
package server

// Package supervisor runs subagents as real processes and owns their state.
//
// An agent is one supervised subagent; it runs zero or one submission at a
// time. A submission is one run of the agent command for one message: a
// `/bin/sh -c` child in its own session and process group, its message on
// stdin, its stdout and stderr read continuously into a log file, a bounded
// scrollback of display lines, and a tail kept for last_output.
//
// Where a submission runs is its runner's (package runner: runner/local for
// process groups on this machine, runner/kube for pods, SPEC §13): the
// engine starts every submission through a runner.Runner and never asks
// which one it has. At start it reads the journals of earlier runs for
// submissions that never ended and hands them to the local runner's orphan
// sweep (local.Orphans).
//
// The operations (Spawn, Send, Interrupt, Close, Resume, Wait, List, …)
// follow SPEC.md §3 (at the repository's top level) with its exact error
// messages (proto's Err… constructors); the Supervisor implements the role
// interfaces of package proto, through which the dashboard, the control
// socket, `subdash ctl` and the MCP server call it. Callers learn about
// changes through Subscribe, which coalesces events for a slow subscriber,
// never blocks the goroutines reading a child's pipes, and hands each
// change over with its agent's snapshot (proto.Change.Info).
//
// This package never imports a UI library.
package supervisor

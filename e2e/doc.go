// Package e2e holds the end-to-end tests of the subdash binary: it is built
// once (TestMain, from the repository root) and run as a user runs it, in a
// tmux pane, as `subdash serve`, `subdash ctl`, `subdash mcp` and `subdash
// attach`, over real child processes. Nothing imports this package; it has
// no code but its tests.
//
// The harness is in the files named harness_*:
//
//   - harness_host_test.go: a workspace (folder, state directory, socket),
//     subdash processes, `subdash serve` and `subdash ctl`;
//   - harness_tmux_test.go: a dashboard or viewer in a detached tmux session
//     of its own server: keys in, screen out, exit status and terminal state;
//   - harness_screen_test.go: reading a captured screen (table rows, the log
//     pane, borders, SGR attributes);
//   - harness_procs_test.go: what /proc and the journal say (process groups,
//     leftovers, CPU, memory);
//   - harness_mcp_test.go: an MCP client over stdio, by the go-sdk or by hand.
//
// Every other file is one area of the product (dashboard, pager, cases,
// attach, ctl, socket, hosts, records, mcp, approvals, attention, failures,
// exit, kube, presets), a judge replaying tests we did not write
// (memo_collab: Memo's collab tests; sdk_goldens: the MCP Go SDK's
// conformance files; docs/codebase.md) or a benchmark (bench_*, run with SUBDASH_BENCH=1 or
// -bench; BENCHMARKS.md gives the commands). Waits poll the screen or the
// socket with a deadline, never sleep and hope.
//
// Under -race the tests of the seam between the engine and the ui (a host
// and its viewers, the host dashboard; marked raceChecked) run a race-built
// subdash for their hosts and viewers, and a race it reports fails the
// run; the other tests and the benchmarks run a plain build (main_test.go).
//
// The tests need tmux and less; without them they skip, unless
// SUBDASH_REQUIRE_TOOLS=1 (as .ci/run sets), where a missing tool fails.
package e2e

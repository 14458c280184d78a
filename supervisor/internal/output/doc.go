// Package output is the output pipeline of one submission (SPEC §5): the
// raw bytes a runner reads from its stdout and stderr go, unchanged and in
// order, to the log file (logfile.go), and, as display lines with SGR
// kept and everything else removed (package termtext), to a bounded
// scrollback addressed by absolute line numbers (scrollback.go), their text
// in reused blocks (linetext.go); a raw tail of each stream is kept for
// last_output and complete raw lines go to a structured agent's transcript
// (rawoutput.go). The log files are capped (--max-log-size: the head and
// the tail kept, in parts, logfile.go) and held back below the free-space
// floor of the state directory (Space, space.go); OpenLog (logread.go)
// reads a log as that left it, the bytes it holds and the gaps between
// them (Log.Walk: up to a gap and from it on), for every reader: the
// pager, `ctl logs`, a read-back, a restored transcript, a search. A
// finished submission's lines can be released and read back from its log
// (readback.go). All outputs of a host share one memory budget of display
// lines (Memory, memory.go), one CPU budget of feeds (Budget, budget.go)
// and one free-space floor.
//
// Only the engine (package supervisor) imports it: one Output per
// submission, fed by the runner's StartRequest.Log and Display (or
// Output); the front-ends see its lines through the engine's Window.
package output

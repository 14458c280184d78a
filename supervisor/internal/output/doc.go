// Package output is the output pipeline of one submission (SPEC §5): the
// raw bytes a runner reads from its stdout and stderr go, unchanged and in
// order, to the log file (logfile.go), and, as display lines with SGR
// kept and everything else removed (package termtext), to a bounded
// scrollback addressed by absolute line numbers (scrollback.go), their text
// in reused blocks (linetext.go); a raw tail of each stream is kept for
// last_output and complete raw lines go to a structured agent's transcript
// (rawoutput.go). A finished submission's lines can be released and read
// back from its log file (readback.go). All outputs of a host share one
// memory budget of display lines (Memory, memory.go) and one CPU budget of
// feeds (Budget, budget.go).
//
// Only the engine (package supervisor) imports it: one Output per
// submission, fed by the runner's StartRequest.Log and Display (or
// Output); the front-ends see its lines through the engine's Window.
package output

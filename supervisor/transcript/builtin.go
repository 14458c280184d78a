package transcript

import (
	"bytes"
	"regexp"
)

// The built-in agent's stdin protocol (SPEC §11 steer), spoken by the host
// that steers it and by the agent (supervisor/builtin) alike. With
// --input-format stream-json (SUBDASH_AGENT_INPUT=stream-json) the agent's
// stdin carries one JSON user line per message, as claude takes it, the
// task first, and stays open. On stdout the agent says each further
// message it takes in a line of its own (BuiltinTakenLine): that line is
// the message's receipt. After each task it writes BuiltinDone or
// BuiltinFailed and waits for more until stdin closes; the host closes it
// when no steered message waits for its receipt.

// BuiltinInputStreamJSON is the built-in agent's --input-format value for
// steering, which the host passes as SUBDASH_AGENT_INPUT.
const BuiltinInputStreamJSON = "stream-json"

// The lines that end a task of the built-in agent in stream-json, by its
// outcome (IsBuiltinEnd).
const (
	BuiltinDone   = "↪ task done"
	BuiltinFailed = "↪ task failed"
)

// builtinTakenPrefix starts every line that says a message was taken.
const builtinTakenPrefix = "↪ took message "

var builtinTakenRE = regexp.MustCompile(`^↪ took message ([0-9A-Za-z-]+) \((folded|next_turn)\)`)

// BuiltinTakenLine is the line the built-in agent writes when it takes
// message id with receipt ("folded" or "next_turn", SPEC §11), saying
// where and what: "↪ took message <id> (folded) after 3 files, before
// ui/x.go: also audit tests". text is one line, safe for a terminal.
func BuiltinTakenLine(id, receipt, where, text string) string {
	return builtinTakenPrefix + id + " (" + receipt + ") " + where + ": " + text
}

// ParseBuiltinTaken reads a BuiltinTakenLine (raw stdout, its newline
// optional) and returns the message id and the receipt; ok is false for
// any other line.
func ParseBuiltinTaken(line []byte) (id, receipt string, ok bool) {
	if !bytes.HasPrefix(line, []byte(builtinTakenPrefix)) {
		return "", "", false
	}
	m := builtinTakenRE.FindSubmatch(line)
	if m == nil {
		return "", "", false
	}
	return string(m[1]), string(m[2]), true
}

// IsBuiltinEnd reports whether a raw stdout line is one that ends a task
// of the built-in agent in stream-json, done or failed (its newline
// optional).
func IsBuiltinEnd(line []byte) bool {
	s := string(bytes.TrimRight(line, "\r\n"))
	return s == BuiltinDone || s == BuiltinFailed
}

package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/termtext"
)

// malformed returns the entry for a line that is not a JSON object, or
// none when nothing of the line is left to show once escape sequences and
// controls are removed (a CLI that hides the cursor on stdout).
func malformed(line []byte) []Entry {
	s := line
	cut := len(s) > MaxMalformedBytes
	if cut {
		s = s[:MaxMalformedBytes]
	}
	text := plain(strings.ToValidUTF8(string(s), "\uFFFD"))
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if len(text) > MaxMalformedBytes { // tabs expanded
		text, cut = strings.ToValidUTF8(text[:MaxMalformedBytes], ""), true
	}
	if cut {
		text += fmt.Sprintf("…[%d bytes]", len(line))
	}
	return []Entry{{Kind: KindMalformed, Text: text}}
}

// unknown returns the entry for an event this package does not know: its
// type and subtype, or the first keys of an event without a type.
func unknown(line []byte, typ, subtype string) Entry {
	text := termtext.OneLine(typ, MaxSummaryRunes)
	if text == "" {
		var keys []string
		for _, f := range objectFields(line, 6) {
			keys = append(keys, f.key)
		}
		if len(keys) > 5 {
			keys = append(keys[:5], "…")
		}
		text = "event without type {" + strings.Join(keys, ", ") + "}"
	} else if subtype != "" {
		text += "/" + subtype
	}
	return Entry{Kind: KindUnknown, Text: termtext.OneLine(text, MaxSummaryRunes)}
}

// headLines returns the first MaxResultLines lines of tool output, each
// cleaned (see plainPrefix) and cut to MaxResultLineRunes runes, and how many
// lines it left out. A trailing newline does not count as an extra line. The
// work is linear in len(s).
func headLines(s string) (string, int) {
	s = strings.TrimRight(s, "\r\n")
	if s == "" {
		return "", 0
	}
	var lines []string
	rest := s
	for len(lines) < MaxResultLines && rest != "" {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		line, cut := plainPrefix(strings.TrimRight(line, "\r"))
		lines = append(lines, cutRunes(line, MaxResultLineRunes, cut))
	}
	more := 0
	if rest != "" {
		more = strings.Count(rest, "\n") + 1
	}
	return strings.Join(lines, "\n"), more
}

// cutRunes cuts s to limit runes, ending a cut with "…"; more says s is
// itself the start of a longer text, which ends it with "…" too.
func cutRunes(s string, limit int, more bool) string {
	if !more && len(s) <= limit {
		return s
	}
	n, last := 0, -1 // last: where rune limit-1 starts, the place of a "…"
	for i := range s {
		if n == limit-1 {
			last = i
		}
		if n == limit {
			return s[:last] + "…"
		}
		n++
	}
	switch {
	case !more:
		return s
	case last >= 0:
		return s[:last] + "…"
	}
	return s + "…"
}

// field is one member of a JSON object, in document order.
type field struct {
	key string
	val json.RawMessage
}

// objectFields returns the members of the JSON object raw in order, at most
// limit of them (all when limit ≤ 0); nil when raw is not an object.
func objectFields(raw []byte, limit int) []field {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return nil
	}
	var fs []field
	for dec.More() && (limit <= 0 || len(fs) < limit) {
		kt, err := dec.Token()
		if err != nil {
			return fs
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fs
		}
		fs = append(fs, field{key: k, val: v})
	}
	return fs
}

// summaryKeys are the input members that best say what a tool call does, in
// order of preference: Bash/shell commands, Read/Write/Edit file paths,
// Grep/Glob patterns (before their search path), URLs and queries.
var summaryKeys = []string{"command", "cmd", "file_path", "notebook_path",
	"absolute_path", "pattern", "path", "dir_path", "url", "query"}

// toolSummary returns a one-line summary of a tool's input object: the most
// telling member (see summaryKeys), else "key=value" of its first members.
func toolSummary(input []byte) string {
	fs := objectFields(input, 0)
	for _, k := range summaryKeys {
		for _, f := range fs {
			if f.key != k {
				continue
			}
			if s, ok := stringish(f.val); ok && s != "" {
				if k == "command" || k == "cmd" {
					s = unwrapShell(s)
				}
				return termtext.OneLine(s, MaxSummaryRunes)
			}
		}
	}
	var parts []string
	size := 0
	for _, f := range fs {
		if size > MaxSummaryRunes {
			break
		}
		part := f.key + "=" + compactValue(f.val)
		parts = append(parts, part)
		size += len(part) + 1
	}
	return termtext.OneLine(strings.Join(parts, " "), MaxSummaryRunes)
}

// stringish returns a JSON string, or the strings of an array joined by
// spaces (codex and some tools pass commands as argv).
func stringish(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var argv []string
	if json.Unmarshal(v, &argv) == nil {
		return strings.Join(argv, " "), true
	}
	return "", false
}

// compactValue renders a JSON value for a key=value summary: strings bare,
// numbers and booleans as written, objects and arrays abbreviated.
func compactValue(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return termtext.OneLine(s, 60)
		}
	case '{':
		return "{…}"
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) == nil {
			return "[" + strconv.Itoa(len(items)) + " items]"
		}
		return "[…]"
	}
	return termtext.OneLine(string(v), 30)
}

// unwrapShell returns the script of a `sh -c 'script'` style command line
// (codex reports `/bin/bash -lc '…'`), or cmd unchanged.
func unwrapShell(cmd string) string {
	prog, rest, ok := strings.Cut(cmd, " ")
	if !ok {
		return cmd
	}
	switch prog[strings.LastIndexByte(prog, '/')+1:] {
	case "sh", "bash", "zsh", "dash":
	default:
		return cmd
	}
	flag, script, ok := strings.Cut(rest, " ")
	if !ok || (flag != "-c" && flag != "-lc") || len(script) < 2 {
		return cmd
	}
	switch q := script[0]; {
	case q == '\'' && script[len(script)-1] == '\'':
		inner := script[1 : len(script)-1]
		// POSIX: a quote inside single quotes is written '\''.
		if strings.Contains(strings.ReplaceAll(inner, `'\''`, ""), "'") {
			return cmd // several quoted words: leave it as written
		}
		return strings.ReplaceAll(inner, `'\''`, `'`)
	case q == '"' && script[len(script)-1] == '"':
		if s, err := strconv.Unquote(script); err == nil {
			return s
		}
		return script[1 : len(script)-1]
	}
	return script
}

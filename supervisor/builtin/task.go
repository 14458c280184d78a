package builtin

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// tasksHelp lists the tasks the agent understands; it follows every
// "not understood" error on stderr.
const tasksHelp = `The built-in audit agent understands these tasks:
  find MARKERS [in PATH]   list the lines holding TODO, FIXME, XXX or HACK
      find TODO/FIXME/XXX/HACK in supervisor
      find TODO in ui
      find FIXME and HACK in .
  audit [PATH]             the same for all four markers
      audit supervisor
  summarize [PATH]         files, lines and bytes per language, largest files
      summarize .
  split [PATH]             audit PATH by delegating: a child agent audits each
                           subfolder, this one the files directly in PATH
      split supervisor     (an agent of a host run with --allow-nested)
      fan out over ui
PATH is relative to the agent's working directory (absolute paths work too)
and defaults to it. Files ignored by .gitignore, special files (devices,
FIFOs, sockets) and pseudo filesystems such as /proc and /sys are skipped.
`

// markers are the words find looks for, in the order summaries list them.
var markers = []string{"TODO", "FIXME", "XXX", "HACK"}

// taskKind says which job a task message asks for.
type taskKind int

const (
	taskFind taskKind = iota + 1
	taskSummarize
	taskSplit
)

// task is a parsed task message.
type task struct {
	kind    taskKind
	markers []string // for taskFind: a non-empty subset of markers, in their order
	path    string   // as written in the message; "." when none was given
}

var (
	findRE      = regexp.MustCompile(`^(?i:find|search|grep|scan|look|list)\s+(.+?)(?:\s+(?i:in|under|inside|within)\s+(.+))?$`)
	auditRE     = regexp.MustCompile(`^(?i:audit)(?:\s+(.+))?$`)
	splitRE     = regexp.MustCompile(`^(?i:split|fan\s+out(?:\s+(?:over|across|on))?|delegate)(?:\s+(.+))?$`)
	summarizeRE = regexp.MustCompile(`^(?i:summari[sz]e|summary\s+of|summary|stats\s+(?:for|of)|stats)(?:\s+(.+))?$`)
)

// fillerWords may stand among the markers of a find task without changing
// it ("find all TODO and FIXME comments in ui"). "all", "markers" and the
// like alone mean every marker.
var fillerWords = map[string]bool{
	"AND": true, "OR": true, "FOR": true, "THE": true, "ALL": true,
	"COMMENT": true, "COMMENTS": true, "MARKER": true, "MARKERS": true,
}

// parseTask reads a task message: a find, audit, summarize or split command on one
// line, as described by tasksHelp. The message is trimmed first; an empty
// or unknown message gives an error naming it.
func parseTask(msg string) (task, error) {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return task{}, errors.New("empty task: tell the agent what to do")
	}
	if m := auditRE.FindStringSubmatch(msg); m != nil {
		return task{kind: taskFind, markers: markers, path: cleanPath(m[1])}, nil
	}
	if m := splitRE.FindStringSubmatch(msg); m != nil {
		return task{kind: taskSplit, path: cleanPath(m[1])}, nil
	}
	if m := summarizeRE.FindStringSubmatch(msg); m != nil {
		return task{kind: taskSummarize, path: cleanPath(m[1])}, nil
	}
	if m := findRE.FindStringSubmatch(msg); m != nil {
		if ms, ok := parseMarkers(m[1]); ok {
			return task{kind: taskFind, markers: ms, path: cleanPath(m[2])}, nil
		}
	}
	return task{}, fmt.Errorf("task not understood: %q", msg)
}

// parseMarkers reads a list such as "TODO/FIXME", "todos and fixmes" or
// "all markers". It reports false when a word is neither a marker nor a
// filler word.
func parseMarkers(s string) ([]string, bool) {
	words := strings.FieldsFunc(s, func(r rune) bool {
		return strings.ContainsRune(" \t,/|+&;", r)
	})
	want := map[string]bool{}
	for _, w := range words {
		w = strings.ToUpper(strings.Trim(w, "\"'`:()"))
		switch {
		case w == "":
		case fillerWords[w]:
		case isMarker(w):
			want[w] = true
		case strings.HasSuffix(w, "S") && isMarker(w[:len(w)-1]):
			want[w[:len(w)-1]] = true
		default:
			return nil, false
		}
	}
	if len(want) == 0 {
		if len(words) == 0 {
			return nil, false
		}
		return markers, true // only filler words: "find all markers"
	}
	var ms []string
	for _, m := range markers {
		if want[m] {
			ms = append(ms, m)
		}
	}
	return ms, true
}

// isMarker reports whether w is one of the markers.
func isMarker(w string) bool { return slices.Contains(markers, w) }

// cleanPath trims spaces and one pair of surrounding quotes or backticks;
// an empty path means ".".
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if len(p) >= 2 {
		if q := p[0]; (q == '"' || q == '\'' || q == '`') && p[len(p)-1] == q {
			p = strings.TrimSpace(p[1 : len(p)-1])
		}
	}
	if p == "" {
		return "."
	}
	return p
}

package transcript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Cwd returns the working directory claude reported in its init line, ""
// before it (or for another format).
func (p *Parser) Cwd() string { return p.cwd }

// ClaudeDenial returns the words claude tells its model when it denies
// tool permission request c itself: what `claude -p` without a prompt
// tool gives as the tool's result (and in its permission_denied event),
// recorded with claude 2.1.328 in
// testdata/agent-streams/denials/claude-2.1.328.jsonl. cwd is the
// session's working directory (claude's init line), "" when unknown.
//
// claude builds those words in its permission checks, and the request
// carries only part of what they are made from, so the words are claude's
// where the request holds it: the reason claude asks ("This command
// requires approval"), a Bash command's blocked path (its command or its
// output redirection, inside or outside cwd), the file a write or read
// tool names. Elsewhere (a compound Bash command, whose parts claude
// names from its own parse) they are claude's words for any other tool:
// "Claude requested permissions to use TOOL, but you haven't granted it
// yet." (SPEC §12 "Questions").
func ClaudeDenial(c ControlRequest, cwd string) string {
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	_ = json.Unmarshal(c.Input, &in) // a request's input is an object (ParseClaudeControl)
	switch {
	case (c.DecisionReasonType == "other" || c.DecisionReasonType == "safetyCheck") && c.DecisionReason != "":
		return c.DecisionReason
	case c.Tool == "Bash" && c.BlockedPath != "" && cwd != "":
		if what := bashBlocked(in.Command, c.BlockedPath, cwd); what != "" {
			if inside(c.BlockedPath, cwd) {
				return fmt.Sprintf("%s needs approval. The path is inside the working directories for this session ('%s'), and Claude Code asks before a shell command creates, changes or removes files there.", what, cwd)
			}
			return fmt.Sprintf("%s needs approval. The path is outside the working directories for this session ('%s'). Allowing runs the command as written.", what, cwd)
		}
	case (c.Tool == "Write" || c.Tool == "Edit" || c.Tool == "MultiEdit") && in.FilePath != "":
		return "Claude requested permissions to write to " + in.FilePath + ", but you haven't granted it yet."
	case c.Tool == "NotebookEdit" && in.NotebookPath != "":
		return "Claude requested permissions to write to " + in.NotebookPath + ", but you haven't granted it yet."
	case c.Tool == "Read" && in.FilePath != "":
		return "Claude requested permissions to read from " + in.FilePath + ", but you haven't granted it yet."
	}
	return "Claude requested permissions to use " + c.Tool + ", but you haven't granted it yet."
}

// bashSimple matches a Bash command without the operators that make claude
// judge its parts one by one (&&, ||, ;, |, subshells, substitutions).
var bashSimple = regexp.MustCompile("^[^;&|`$()]*$")

// bashBlocked names what in the simple Bash command cmd needs blocked, as
// claude does: "Output redirection to '<path>'" when a redirection of cmd
// writes it, else "<command> in '<path>'"; "" for a command claude judges
// in parts.
func bashBlocked(cmd, blocked, cwd string) string {
	if !bashSimple.MatchString(cmd) {
		return ""
	}
	words := strings.Fields(cmd)
	for i, w := range words {
		target, ok := strings.CutPrefix(strings.TrimLeft(w, "0123456789&"), ">")
		if !ok {
			continue
		}
		target = strings.TrimPrefix(target, ">")
		if target == "" && i+1 < len(words) {
			target = words[i+1]
		}
		target = strings.Trim(target, `'"`)
		if !filepath.IsAbs(target) {
			target = filepath.Join(cwd, target)
		}
		if filepath.Clean(target) == filepath.Clean(blocked) {
			return "Output redirection to '" + blocked + "'"
		}
	}
	for _, w := range words {
		if !envAssignment.MatchString(w) {
			return w + " in '" + blocked + "'"
		}
	}
	return ""
}

var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// inside reports whether path is dir or under it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

package sshlink

import "strings"

// shellScript is the script /bin/sh -c runs for a SUBDASH_SSH_COMMAND sc,
// with ssh's arguments after it as "$@" (as git runs GIT_SSH_COMMAND), so
// that no ssh outlives this process however sc is written:
//
//   - one simple command (assignments first, quotes, $VAR, redirections
//     allowed): "exec" goes before its command word, so the shell becomes
//     ssh and the link's signals (Pdeathsig when this process dies, Close)
//     reach ssh itself;
//   - anything else (a list, a pipe, a compound command, a substitution):
//     the shell runs sc in the background with this stdin and waits, and a
//     SIGHUP, SIGINT or SIGTERM to the shell (Pdeathsig included: a viewer
//     killed with SIGKILL) sends SIGTERM to its whole process group, ssh
//     and all. The exit status is sc's (127 when its command is missing).
func shellScript(sc string) string {
	if at, ok := commandWord(sc); ok {
		if strings.HasPrefix(sc[at:], "exec ") {
			return sc + ` "$@"`
		}
		return sc[:at] + "exec " + sc[at:] + ` "$@"`
	}
	return guardScript(sc)
}

// guardScript runs sc in the background of a shell that passes a signal
// on to its process group (the link's command runs in a group of its own):
// a shell waiting in `wait` runs its trap at once, where one waiting for a
// foreground command would run it only after that command ended. fd 3
// carries stdin to the background list (which would otherwise read
// /dev/null).
func guardScript(sc string) string {
	return "trap 'trap - HUP INT TERM; kill -TERM 0' HUP INT TERM\n" +
		"exec 3<&0\n" +
		"{ " + sc + ` "$@"` + "\n} <&3 3<&- &\n" +
		"wait $!"
}

// reservedWords start a compound command or a pipeline's negation in sh;
// "exec" cannot go before them.
var reservedWords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true,
	"{": true, "}": true, "!": true, "[[": true, "]]": true, "function": true, "select": true, "time": true,
	"command": true, "builtin": true, "eval": true,
}

// commandWord returns where the command word of sc starts when sc is one
// simple command of sh: words separated by blanks outside quotes, none of
// ; & | ( ) or a newline outside quotes, no command substitution ($( or a
// backquote) or arithmetic, and a first word after any NAME=value
// assignments that is not a reserved word (nor command, builtin or eval,
// which exec cannot run), nor a redirection. ok is false for anything else.
func commandWord(sc string) (at int, ok bool) {
	type word struct{ start, end int }
	var words []word
	start := -1
	inSingle, inDouble := false, false
	for i := 0; i < len(sc); i++ {
		c := sc[i]
		switch {
		case inSingle:
			if c == '\'' {
				inSingle = false
			}
			continue
		case c == '\\':
			if start < 0 {
				start = i
			}
			i++ // the next byte is quoted
			continue
		case c == '`', c == '$' && i+1 < len(sc) && sc[i+1] == '(':
			return 0, false
		case inDouble:
			if c == '"' {
				inDouble = false
			}
			continue
		case c == '\'':
			inSingle = true
		case c == '"':
			inDouble = true
		case c == ' ' || c == '\t':
			if start >= 0 {
				words = append(words, word{start, i})
				start = -1
			}
			continue
		case strings.IndexByte(";&|()\n", c) >= 0:
			return 0, false
		}
		if start < 0 {
			start = i
		}
	}
	if inSingle || inDouble {
		return 0, false
	}
	if start >= 0 {
		words = append(words, word{start, len(sc)})
	}
	for _, w := range words {
		text := sc[w.start:w.end]
		if isAssignment(text) {
			continue
		}
		if reservedWords[text] || strings.HasPrefix(text, "<") || strings.HasPrefix(text, ">") || text[0] >= '0' && text[0] <= '9' && strings.ContainsAny(text, "<>") {
			return 0, false
		}
		return w.start, true
	}
	return 0, false
}

// isAssignment reports whether a word is sh's NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

package sshlink

import (
	"bytes"
	"strings"
	"sync"
)

// Kind is what went wrong with a link, for the caller's decision (retry or
// not) and for tests; the message is Error's.
type Kind int

// The kinds of Error.
const (
	// Other is none of those below: the message says what.
	Other       Kind = iota
	NoSSH            // ssh (or SUBDASH_SSH_COMMAND) cannot be run
	Auth             // ssh could not log in: key, agent, passphrase, user
	HostKey          // the host key is unknown or changed
	Unreachable      // no connection: refused, timed out, no such name
	NoSubdash        // no subdash on the remote machine, or not the one named
	Version          // the subdash there speaks another bridge or control protocol
	NoFolder         // the folder does not exist there
	NoHost           // no subdash host serves the folder (or the socket) there
	Forwarding       // the ssh server refuses Unix-socket forwarding
	NoAnswer         // the host or the link did not answer within the deadline
	Hung             // a host serves there but does not answer: stopped or hung
	Down             // the link's ssh ended
)

// Error is a failure of a link to a target: it names the target, says what
// happened (ssh's own line quoted where it has one) and what to do.
type Error struct {
	Target string // Target.Name()
	Kind   Kind   // what failed, so callers tell a lasting failure (Auth) from one worth a retry
	Text   string // what happened
	Hint   string // what to do; "" when nothing helps but the text
}

// Error is "ssh://host/dir: what happened; what to do".
func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Target + ": " + e.Text
	}
	return e.Target + ": " + e.Text + "; " + e.Hint
}

// Lasting reports whether trying again soon cannot help: the user has to
// change something (a key, a version, the server's configuration, the
// binary there), or the host there is stopped or hung while the link works
// (as a local viewer ends on a stopped host). A reconnect gives up at once
// on such an error.
func (e *Error) Lasting() bool {
	switch e.Kind {
	case NoSSH, Auth, HostKey, NoSubdash, Version, NoFolder, Forwarding, Hung:
		return true
	}
	return false
}

// tail keeps the last bytes an ssh wrote to its stderr (its reason for
// failing is its last line). Safe for concurrent use: the process writes
// while the link reads.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 16 << 10

// Write is io.Writer's; only the last tailMax bytes are kept.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

// lines returns the lines written, without empty ones and ssh's notices
// that are no reason (Warning: Permanently added …), oldest first.
func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range bytes.Split(t.buf, []byte("\n")) {
		s := strings.TrimSpace(strings.ToValidUTF8(string(l), "\uFFFD"))
		if s == "" || strings.HasPrefix(s, "Warning: Permanently added") {
			continue
		}
		out = append(out, s)
	}
	return out
}

// last returns the last line lines keeps, "" when none.
func (t *tail) last() string {
	ls := t.lines()
	if len(ls) == 0 {
		return ""
	}
	return ls[len(ls)-1]
}

// reason returns ssh's reason: the line that says what failed (a known
// failure's, else the last line), "" when it wrote none.
func (t *tail) reason() string {
	ls := t.lines()
	for i := len(ls) - 1; i >= 0; i-- {
		if kindOfLine(ls[i]) != Other {
			return ls[i]
		}
	}
	return t.last()
}

// kindOfLine classifies one line ssh wrote to stderr.
func kindOfLine(l string) Kind {
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(l, x) {
				return true
			}
		}
		return false
	}
	switch {
	case has("Permission denied", "Too many authentication failures", "No more authentication methods",
		"Authentication failed", "no matching host key type"):
		return Auth
	case has("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED", "No ED25519 host key is known",
		"host key is known for", "have requested strict checking"):
		return HostKey
	case has("Connection refused", "Connection timed out", "Could not resolve hostname", "No route to host",
		"Network is unreachable", "Operation timed out", "Connection closed by", "Connection reset by",
		"kex_exchange_identification", "banner exchange", "closed by remote host", "not responding",
		"Broken pipe", "Name or service not known", "Temporary failure in name resolution"):
		return Unreachable
	}
	return Other
}

package sshlink

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// Scheme is the prefix of a target: a host on another machine, reached
// over the user's own ssh.
const Scheme = "ssh://"

// Target names a subdash host on another machine (SPEC §9):
// ssh://[user@]host[:port]/abs/dir, the host serving that folder there,
// with ?socket=/path naming its control socket instead of finding it, and
// ?subdash=/path naming the subdash binary there.
type Target struct {
	User string // "" : ssh's own choice (its config, else the local user)
	Host string // a host name, an address, or an alias of the user's ssh config
	Port int    // 0: ssh's own choice (its config, else 22)
	// Dir is the absolute working directory of the host there, cleaned;
	// "" only when Socket is given.
	Dir string
	// Socket is the host's control socket there (?socket=); "" to find it
	// from Dir with the bridge (SPEC §6's default path, or the host lock).
	Socket string
	// Subdash is the subdash command there (?subdash=); "" for
	// SUBDASH_REMOTE_COMMAND, else a search of PATH, ~/go/bin,
	// ~/.local/bin and /usr/local/bin.
	Subdash string
}

// IsTarget reports whether s names a host over ssh (starts with ssh://),
// as opposed to a local folder or socket.
func IsTarget(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), Scheme) }

// ParseTarget parses an ssh:// target. Errors say what is wrong with it
// and give the shape: a missing host, a relative or missing folder, a
// port that is not a number from 1 to 65535, a password in the URL, a host
// or user that ssh would take for an option (starts with -), or a query
// other than socket= and subdash=.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	bad := func(format string, a ...any) (Target, error) {
		return Target{}, fmt.Errorf("target %s: %s; the shape is ssh://[user@]host[:port]/abs/dir[?socket=/path][&subdash=/path]", s, fmt.Sprintf(format, a...))
	}
	if !IsTarget(s) {
		return bad("not an ssh:// target")
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("%v", unwrapURL(err))
	}
	var t Target
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return bad("a password in the target is not taken (it would show in ps and in every message): use a key, or ssh's own prompt")
		}
		t.User = u.User.Username()
	}
	t.Host = u.Hostname()
	switch {
	case t.Host == "":
		return bad("no host")
	case strings.HasPrefix(t.Host, "-") || strings.HasPrefix(t.User, "-"):
		return bad("a host or user may not start with - (ssh would read it as an option)")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("port %q is not a number from 1 to 65535", p)
		}
		t.Port = n
	}
	q := u.Query()
	for k := range q {
		if k != "socket" && k != "subdash" {
			return bad("unknown option %q (only socket= and subdash=)", k)
		}
	}
	t.Socket, t.Subdash = q.Get("socket"), q.Get("subdash")
	if t.Socket != "" && !strings.HasPrefix(t.Socket, "/") {
		return bad("socket=%s is not an absolute path", t.Socket)
	}
	switch p := u.Path; {
	case u.Fragment != "" || u.RawFragment != "":
		return bad("a # in the target: escape it as %%23 in a folder name")
	case p == "" || p == "/":
		if t.Socket == "" {
			return bad("no folder: give the absolute path of the folder the host serves there (or ?socket=)")
		}
	default:
		t.Dir = path.Clean(p)
	}
	return t, nil
}

// unwrapURL drops url.Error's repetition of the whole URL.
func unwrapURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// Destination is what ssh is given to connect to: [user@]host.
func (t Target) Destination() string {
	if t.User != "" {
		return t.User + "@" + t.Host
	}
	return t.Host
}

// Name is the target as messages and screens name it:
// ssh://[user@]host[:port]/dir, with ?socket= when no folder is given.
func (t Target) Name() string {
	host := t.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if t.User != "" {
		host = t.User + "@" + host
	}
	if t.Port != 0 {
		host += ":" + strconv.Itoa(t.Port)
	}
	if t.Dir == "" {
		return Scheme + host + "?socket=" + t.Socket
	}
	return Scheme + host + t.Dir
}

// String is the whole target, options included, as ParseTarget reads it.
func (t Target) String() string {
	s := t.Name()
	if t.Dir == "" {
		s = strings.TrimSuffix(s, "?socket="+t.Socket)
	}
	q := url.Values{}
	if t.Socket != "" {
		q.Set("socket", t.Socket)
	}
	if t.Subdash != "" {
		q.Set("subdash", t.Subdash)
	}
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

package sshlink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// finderScript runs in `sh -s` on the remote machine (sent on stdin, so it
// does not depend on the login shell's syntax): it starts the subdash
// there as `subdash bridge --print-socket --dir DIR`, the command named
// ($1: ?subdash= or SUBDASH_REMOTE_COMMAND, shell text), else the first
// of PATH, ~/go/bin, ~/.local/bin and /usr/local/bin (a non-interactive
// ssh reads no ~/.profile, so ~/go/bin is rarely on PATH). Exit 127 with
// what it looked at when there is none.
const finderScript = `cmd=$1 dir=$2
if [ -n "$cmd" ]; then
	eval "exec $cmd bridge --print-socket --dir \"\$dir\""
fi
for c in subdash "$HOME/go/bin/subdash" "$HOME/.local/bin/subdash" /usr/local/bin/subdash; do
	if p=$(command -v "$c" 2>/dev/null) && [ -x "$p" ]; then
		exec "$p" bridge --print-socket --dir "$dir"
	fi
done
echo "no subdash on $(hostname 2>/dev/null || echo the remote machine) (looked for subdash on PATH=$PATH, in $HOME/go/bin, $HOME/.local/bin and /usr/local/bin)" >&2
exit 127
`

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// remoteCommand is the subdash command there, as shell text: the target's
// ?subdash= (a path; ~/ is the remote home), else SUBDASH_REMOTE_COMMAND
// (shell text, as it is), else "" (the finder searches).
func (l *Link) remoteCommand() string {
	if p := l.t.Subdash; p != "" {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return `"$HOME"/` + shellQuote(rest)
		}
		return shellQuote(p)
	}
	return strings.TrimSpace(l.o.Getenv("SUBDASH_REMOTE_COMMAND"))
}

// remoteNamed says how the subdash there was named, for messages.
func (l *Link) remoteNamed() string {
	switch {
	case l.t.Subdash != "":
		return "the target's subdash=" + l.t.Subdash
	case l.o.Getenv("SUBDASH_REMOTE_COMMAND") != "":
		return "SUBDASH_REMOTE_COMMAND (" + l.o.Getenv("SUBDASH_REMOTE_COMMAND") + ")"
	}
	return ""
}

// limited is a buffer that keeps at most 1 MiB (the bridge prints two
// short lines).
type limited struct{ bytes.Buffer }

// Write keeps p while the buffer holds less than 1 MiB and drops the rest
// quietly; it always reports len(p) written, so the bridge is never
// stopped by a full buffer.
func (b *limited) Write(p []byte) (int, error) {
	if room := 1<<20 - b.Len(); room < len(p) {
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// find runs the bridge there over the master and keeps the socket it
// found. With ?socket= there is nothing to find.
func (l *Link) find(ctx context.Context) error {
	if l.t.Socket != "" {
		l.remote = l.t.Socket
		return nil
	}
	if err := l.Err(); err != nil {
		return err
	}
	line := "sh -s -- " + shellQuote(l.remoteCommand()) + " " + shellQuote(l.t.Dir)
	cmd, err := l.o.command(ctx, append(muxArgs(l.t, l.cm), "--", l.t.Destination(), line)...)
	if err != nil {
		return err
	}
	var out limited
	var errs tail
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(finderScript), &out, &errs
	status := exitStatus(cmd.Run())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return l.readBridge(status, out.Bytes(), &errs)
}

// readBridge reads what the bridge printed (Hello, then Found) and its
// exit status, or says why there is no bridge.
func (l *Link) readBridge(status int, out []byte, errs *tail) error {
	lines := bufio.NewScanner(bytes.NewReader(out))
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	var hello Hello
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &hello) != nil || hello.Bridge == 0 {
		return l.noBridge(status, errs)
	}
	l.hello = &hello
	if err := l.checkVersions(hello); err != nil {
		return err
	}
	var found Found
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &found) != nil {
		return &Error{Kind: Other, Text: fmt.Sprintf("the bridge there (subdash %s) ended without saying what it found (exit %d): %s", hello.Version, status, errs.last())}
	}
	if found.Error != "" {
		e := &Error{Kind: NoHost, Text: found.Error}
		switch found.Code {
		case CodeNoFolder:
			e.Kind = NoFolder
			e.Hint = "give the folder's absolute path on that machine"
		case CodeHung:
			e.Kind = Hung
		case CodeUsage:
			e.Kind = Version
			e.Hint = "the subdash there does not understand this one's bridge: use the same version on both sides"
		}
		return e
	}
	if found.Socket == "" {
		return &Error{Text: fmt.Sprintf("the bridge there (subdash %s) found no socket and said nothing (exit %d)", hello.Version, status)}
	}
	l.remote = found.Socket
	if found.Info != nil {
		l.info = *found.Info
	}
	return nil
}

// noBridge is the error of a remote command that printed no Hello: ssh
// failed (255), the subdash there is missing (127, 126), or it is a
// subdash without the bridge command (older than 1 of BridgeVersion).
func (l *Link) noBridge(status int, errs *tail) error {
	line := errs.last()
	where := "ssh://" + l.t.Destination() + l.t.Dir + "?subdash=/path/to/subdash"
	switch {
	case status == 255:
		return sshFailure(l.t, l.o, status, errs, "ssh could not run the bridge there")
	case status == 127 || status == 126:
		e := &Error{Kind: NoSubdash, Text: line,
			Hint: fmt.Sprintf("name the subdash there in the target (%s) or in SUBDASH_REMOTE_COMMAND; a non-interactive ssh reads no ~/.profile, so ~/go/bin is rarely on its PATH", where)}
		if named := l.remoteNamed(); named != "" {
			e.Text = fmt.Sprintf("%s could not be run there: %s", named, line)
			e.Hint = "give the path of the subdash binary on that machine"
		}
		return e
	case strings.Contains(line, `"bridge"`) || strings.Contains(line, "unexpected argument"):
		return &Error{Kind: Version, Text: fmt.Sprintf("the subdash there has no bridge command (it said: %s): it is older than this one (%s)", line, l.o.Version),
			Hint: "install this version of subdash there (go install), or name a newer one with ?subdash=/path"}
	}
	if line == "" {
		line = "nothing"
	}
	return &Error{Kind: NoSubdash, Text: fmt.Sprintf("the command there did not answer as subdash's bridge (exit %d; it said: %s)", status, line),
		Hint: fmt.Sprintf("name the subdash there in the target (%s) or in SUBDASH_REMOTE_COMMAND", where)}
}

// checkVersions compares the bridge's versions with this subdash's: each
// side's version and what to upgrade.
func (l *Link) checkVersions(h Hello) error {
	if h.Bridge != BridgeVersion {
		return &Error{Kind: Version,
			Text: fmt.Sprintf("the subdash there (%s) prints bridge version %d, this one (%s) reads version %d", h.Version, h.Bridge, l.o.Version, BridgeVersion),
			Hint: upgrade(h.Bridge > BridgeVersion)}
	}
	if l.o.Protocol != 0 && h.Protocol != l.o.Protocol {
		return &Error{Kind: Version,
			Text: fmt.Sprintf("the subdash there (%s) speaks control protocol v%d, this one (%s) v%d", h.Version, h.Protocol, l.o.Version, l.o.Protocol),
			Hint: upgrade(h.Protocol > l.o.Protocol)}
	}
	return nil
}

// upgrade says which side to upgrade: this one when the remote is newer.
func upgrade(remoteNewer bool) string {
	if remoteNewer {
		return "upgrade this subdash to the version there (go install), or name an older one there with ?subdash=/path"
	}
	return "upgrade the subdash there to this version (go install there), or name a newer one there with ?subdash=/path"
}

// forwardSpec is ssh's -L argument from local to remote: a path with a
// colon is bracketed.
func forwardSpec(local, remote string) string {
	if strings.Contains(remote, ":") {
		remote = "[" + remote + "]"
	}
	return local + ":" + remote
}

// forward asks the master to forward the local end to the host's socket.
func (l *Link) forward(ctx context.Context) error {
	if err := l.Err(); err != nil {
		return err
	}
	args := append(muxArgs(l.t, l.cm), "-O", "forward", "-L", forwardSpec(l.local, l.remote), "--", l.t.Destination())
	cmd, err := l.o.command(ctx, args...)
	if err != nil {
		return err
	}
	var errs tail
	cmd.Stderr = &errs
	if status := exitStatus(cmd.Run()); status != 0 && ctx.Err() == nil {
		return &Error{Kind: Forwarding, Text: fmt.Sprintf("ssh could not forward the host's socket %s: %s", l.remote, errs.reason()),
			Hint: "the local end is a fresh folder of this machine's temporary directory: check that it is writable"}
	}
	return nil
}

// answer asks the host GET /v1/info through the forward: the proof that
// the whole chain works, and what the host says of itself. A reset or
// broken connection is ssh refusing the channel: no socket there, or a server
// that does not forward Unix sockets; which one, a look there says.
func (l *Link) answer(ctx context.Context) error {
	hc := &http.Client{Transport: &http.Transport{
		DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return l.dialLocal(ctx) },
		DisableKeepAlives: true,
	}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://subdash/v1/info", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !l.Down() {
			return &Error{Kind: Hung, Text: fmt.Sprintf("the host's socket %s there accepted the connection through ssh but did not answer within %s: the subdash serving it is stopped or hung", l.remote, l.o.CallTimeout),
				Hint: fmt.Sprintf("look there: ssh %s subdash ctl --socket %s info (kill -CONT resumes a stopped one)", l.t.Destination(), l.remote)}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := l.Err(); err != nil {
			return err
		}
		var untrusted *socket.UntrustedError
		if errors.As(err, &untrusted) {
			return &Error{Kind: Forwarding, Text: untrusted.Text, Hint: untrusted.Hint}
		}
		// ssh closes the channel it cannot open: the request's read sees
		// EOF or a reset, or its write a broken pipe, whichever comes first;
		// net/http says an EOF that came before the request was written as
		// "server closed idle connection" (its errServerClosedIdle, not
		// exported).
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
			strings.Contains(err.Error(), "server closed idle connection") {
			return l.refused(ctx)
		}
		return &Error{Text: fmt.Sprintf("the host's socket %s through ssh: %v", l.remote, err)}
	}
	defer func() { _ = resp.Body.Close() }()
	var info proto.Info
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&info) != nil || info.PID == 0 {
		return &Error{Kind: Version, Text: fmt.Sprintf("what listens on %s there is not a subdash of this version (GET /v1/info answered %s)", l.remote, resp.Status),
			Hint: "give the socket of a subdash host (subdash ctl info names it there)"}
	}
	if l.hello == nil && l.o.Protocol != 0 && info.Protocol != l.o.Protocol {
		return &Error{Kind: Version,
			Text: fmt.Sprintf("the subdash host there (pid %d) speaks control protocol v%d, this subdash (%s) v%d", info.PID, info.Protocol, l.o.Version, l.o.Protocol),
			Hint: upgrade(info.Protocol > l.o.Protocol)}
	}
	l.info = info
	return nil
}

// refused says why ssh reset the first connection: the socket is not
// there (nothing serves it), or the server refuses to forward it. When
// the bridge saw the host answer on it a moment ago, it is the server;
// else `test -S` there, over the master, says whether the socket exists.
func (l *Link) refused(ctx context.Context) error {
	refuses := fmt.Sprintf("the sshd of %s refuses to forward Unix sockets (its AllowStreamLocalForwarding, AllowTcpForwarding, PermitOpen or DisableForwarding)", l.t.Host)
	ask := "ask for AllowStreamLocalForwarding local and AllowTcpForwarding local in its sshd_config (OpenSSH needs both)"
	if l.hello != nil && l.info.PID != 0 {
		return &Error{Kind: Forwarding, Text: fmt.Sprintf("%s: the host's socket %s answers there, but not through ssh", refuses, l.remote), Hint: ask}
	}
	serve := "start one there: subdash serve --socket " + l.remote
	if l.t.Dir != "" {
		serve = "start one there: cd " + l.t.Dir + " && subdash serve --socket " + l.remote
	}
	cmd, err := l.o.command(ctx, append(muxArgs(l.t, l.cm), "--", l.t.Destination(), "test -S "+shellQuote(l.remote))...)
	if err == nil && exitStatus(cmd.Run()) != 0 && ctx.Err() == nil {
		return &Error{Kind: NoHost, Text: fmt.Sprintf("no subdash serves the socket %s there (there is no such socket)", l.remote), Hint: serve}
	}
	return &Error{Kind: NoHost,
		Text: fmt.Sprintf("ssh could not reach the socket %s there: no subdash listens on it any more (a file left behind), or %s", l.remote, refuses),
		Hint: serve + "; or, if one serves it, " + ask}
}

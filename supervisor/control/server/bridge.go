package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/sshlink"
)

// BridgeUsage is the help text of `subdash bridge`.
const BridgeUsage = `usage: subdash bridge --print-socket --dir DIR

Run over ssh by another machine's subdash (subdash attach ssh://host/DIR,
ctl --host, mcp --host): prints one JSON line with its versions, then one
with the control socket of the host serving DIR on this machine and that
host's GET /v1/info, or why there is none. It looks at the host lock in the
state directory, then $XDG_RUNTIME_DIR/subdash, /run/user/UID/subdash and
/tmp/subdash-UID (SPEC §6), and takes the first socket whose host answers.

Exit status: 0 found; 1 no host serves DIR; 2 usage error; 3 no folder DIR;
4 a host serves DIR but does not answer (stopped or hung).
`

// BridgeProbeTimeout bounds the question the bridge asks each candidate
// socket (GET /v1/info): a stopped or hung host there is passed over and
// named in the answer, within the caller's own deadline.
const BridgeProbeTimeout = 3 * time.Second

// Bridge runs `subdash bridge --print-socket --dir DIR` (args are the
// words after "bridge"): the remote half of a link (package sshlink).
// It prints sshlink.Hello at once, then sshlink.Found, each one JSON
// line on stdout; a failure's message goes to stderr too, for a person
// who runs it by hand. It returns the exit status of BridgeUsage.
func Bridge(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	host, _ := os.Hostname()
	if host == "" {
		host = "this machine"
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(sshlink.Hello{Bridge: sshlink.BridgeVersion, Protocol: wire.Protocol, Version: wire.Version(), Host: host})
	fail := func(status int, code, format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		_ = enc.Encode(sshlink.Found{Error: msg, Code: code})
		fmt.Fprintf(stderr, "subdash bridge: %s\n", msg)
		return status
	}
	dir, printSocket := "", false
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		switch {
		case name == "print-socket" && !hasVal:
			printSocket = true
		case name == "dir" && hasVal:
			dir = val
		case name == "dir" && i+1 < len(args):
			i++
			dir = args[i]
		case name == "help" || name == "h":
			fmt.Fprint(stderr, BridgeUsage)
			return bridgeExitUsage
		default:
			return fail(bridgeExitUsage, sshlink.CodeUsage, "unexpected argument %q; %s", args[i], strings.SplitN(BridgeUsage, "\n", 2)[0])
		}
	}
	if !printSocket || !filepath.IsAbs(dir) {
		return fail(bridgeExitUsage, sshlink.CodeUsage, "give --print-socket and --dir with an absolute folder; %s", strings.SplitN(BridgeUsage, "\n", 2)[0])
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if fi, serr := os.Stat(resolved); err != nil || serr != nil || !fi.IsDir() {
		return fail(bridgeExitNoFolder, sshlink.CodeNoFolder, "no folder %s on %s", dir, host)
	}
	found, looked, hung := findHost(resolved, getenv)
	if found.Socket != "" {
		_ = enc.Encode(found)
		return bridgeExitFound
	}
	if hung != nil {
		msg := fmt.Sprintf("on %s, %v", host, hung)
		_ = enc.Encode(sshlink.Found{Error: msg, Code: sshlink.CodeHung, Looked: found.Looked})
		fmt.Fprintf(stderr, "subdash bridge: %s\n", msg)
		return bridgeExitHung
	}
	msg := fmt.Sprintf("no subdash serves %s on %s (looked at: %s); start one there: cd %s && subdash serve", resolved, host, strings.Join(looked, ", "), resolved)
	_ = enc.Encode(sshlink.Found{Error: msg, Code: sshlink.CodeNoHost, Looked: found.Looked})
	fmt.Fprintf(stderr, "subdash bridge: %s\n", msg)
	return bridgeExitNoHost
}

// Exit statuses of Bridge (BridgeUsage).
const (
	bridgeExitFound    = 0 // a host serves the folder: its socket and info printed
	bridgeExitNoHost   = 1 // no host serves the folder (sshlink.CodeNoHost)
	bridgeExitUsage    = 2 // the command line was not understood
	bridgeExitNoFolder = 3 // no such folder (sshlink.CodeNoFolder)
	bridgeExitHung     = 4 // a host serves it but does not answer (sshlink.CodeHung)
)

// findHost asks each candidate socket of dir in turn (hostCandidates) and
// returns the first whose host answers for dir; looked says what each
// other one was (missing, not answering, serving another folder). hung is
// the first candidate's *NoAnswerError whose host accepted the question
// but did not answer it (stopped or hung; it names the pid).
func findHost(dir string, getenv func(string) string) (found sshlink.Found, looked []string, hung error) {
	for _, s := range hostCandidates(dir, getenv) {
		found.Looked = append(found.Looked, s)
		// A folder the rule of trust refuses is said to be so, also where
		// its socket cannot even be seen (another user's folder).
		if err := socket.CheckFolder(filepath.Dir(s), os.Geteuid()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			looked = append(looked, fmt.Sprintf("%s (%v)", s, err))
			continue
		}
		if fi, err := os.Stat(s); err != nil || fi.Mode()&os.ModeSocket == 0 {
			looked = append(looked, s+" (none)")
			continue
		}
		// Probe, not Info: its own deadline of BridgeProbeTimeout gives a
		// *NoAnswerError naming the host's pid (and whether it is stopped),
		// where it passes; the context only caps a dial that hangs.
		ctx, cancel := context.WithTimeout(context.Background(), 2*BridgeProbeTimeout)
		info, err := client.NewClient(s, dir).Probe(ctx, BridgeProbeTimeout)
		cancel()
		var na *client.NoAnswerError
		switch {
		case errors.As(err, &na) && !na.Answers && hung == nil:
			hung = na
			looked = append(looked, fmt.Sprintf("%s (no answer)", s))
		case err != nil:
			looked = append(looked, fmt.Sprintf("%s (%v)", s, err))
		case info.Dir != "" && info.Dir != dir:
			looked = append(looked, fmt.Sprintf("%s (serves %s)", s, info.Dir))
		default:
			found.Socket, found.Info = s, &info
			return found, looked, nil
		}
	}
	return found, looked, hung
}

// hostCandidates are the sockets a host of dir may serve on this machine,
// most telling first: the one its host lock names (whatever
// XDG_RUNTIME_DIR that host had; an ssh session often has none), then
// SPEC §6's default under $XDG_RUNTIME_DIR, /run/user/UID and /tmp.
func hostCandidates(dir string, getenv func(string) string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	env := supervisor.Environment{Getenv: getenv}
	if state, err := supervisor.DefaultStateDir(env); err == nil {
		add(lockedSocket(state, dir))
	}
	uid := os.Getuid()
	if x := getenv("XDG_RUNTIME_DIR"); x != "" {
		add(socket.Default(dir, x, uid))
	}
	add(socket.Default(dir, fmt.Sprintf("/run/user/%d", uid), uid))
	add(socket.Default(dir, "", uid))
	return out
}

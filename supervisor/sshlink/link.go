package sshlink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// Link is one ssh connection to the machine of a Target that carries the
// control socket of the subdash host there to a socket of this machine
// (SPEC §9). It is OpenSSH's own Unix-socket forwarding over a control
// master that the link owns: one login, then every connection to Socket
// is a new ssh channel to the host's socket there, so a viewer's event
// stream, its window requests and the pager's stream run side by side.
// Nothing listens on the network: the local end lives in a folder of mode
// 0700 and is itself mode 0600.
//
// Dial makes one; Close ends its ssh and removes the folder. A Link is
// safe for concurrent use.
type Link struct {
	t Target
	o Options

	tmp, cm, local string // the folder, the master's control socket, the local end
	remote         string // the host's control socket there
	hello          *Hello // what the bridge said; nil with ?socket=
	info           proto.Info

	cmd    *exec.Cmd
	errs   tail // the master's stderr
	done   chan struct{}
	status int // the master's exit status, once done

	closeOnce sync.Once

	// Took is how long each step of Dial took.
	Took Timing
}

// Timing is how long the steps of Dial took: Login, ssh's connection and
// authentication (prompts included); Find, the bridge there (a login
// shell and a look at the candidate sockets; 0 with ?socket=); Forward,
// the forward's set-up; Answer, the host's first answer (GET /v1/info)
// through it.
type Timing struct {
	Login, Find, Forward, Answer time.Duration
}

// Total is the sum of the steps.
func (t Timing) Total() time.Duration { return t.Login + t.Find + t.Forward + t.Answer }

// Dial connects to the machine of t with the user's ssh, finds the host
// serving t.Dir there (the bridge, unless t.Socket names its socket),
// forwards its control socket to a local one and checks that the host
// answers and speaks o.Protocol. The login may prompt (o.Terminal); each
// later step is bounded by o.CallTimeout (SPEC §6: the deadlines start
// after authentication), and ctx may end any step sooner. The errors are
// *Error, naming the target and saying what to do, or ctx's.
func Dial(ctx context.Context, t Target, o Options) (*Link, error) {
	o = o.withDefaults()
	l := &Link{t: t, o: o, done: make(chan struct{})}
	removeStale(tempBase())
	tmp, err := os.MkdirTemp(tempBase(), tempPattern())
	if err != nil {
		return nil, &Error{Target: t.Name(), Text: fmt.Sprintf("a folder for the link's sockets: %v", err), Hint: "check that $TMPDIR (or /tmp) is writable"}
	}
	l.tmp, l.cm, l.local = tmp, filepath.Join(tmp, "cm"), filepath.Join(tmp, "host.sock")
	steps := []struct {
		took *time.Duration
		run  func(context.Context) error
	}{
		{&l.Took.Login, l.login},
		{&l.Took.Find, l.find},
		{&l.Took.Forward, l.forward},
		{&l.Took.Answer, l.answer},
	}
	for i, s := range steps {
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if i > 0 {
			sctx, cancel = context.WithTimeout(ctx, o.CallTimeout)
		}
		start := time.Now()
		err := s.run(sctx)
		*s.took = time.Since(start)
		if err == nil && sctx.Err() != nil {
			err = sctx.Err()
		}
		cancel()
		if err != nil {
			l.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, l.stepError(err, sctx)
		}
	}
	return l, nil
}

// stepError names a step that ran out of its deadline, and the target in
// an error of its own.
func (l *Link) stepError(err error, sctx context.Context) error {
	var le *Error
	if errors.As(err, &le) {
		if le.Target == "" {
			le.Target = l.t.Name()
		}
		return le
	}
	if errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return &Error{Target: l.t.Name(), Kind: NoAnswer,
			Text: fmt.Sprintf("no answer within %s after ssh logged in (%v)", l.o.CallTimeout, err),
			Hint: "the machine or its subdash may be overloaded or stopped: try again, or look at it with ssh"}
	}
	return &Error{Target: l.t.Name(), Text: err.Error()}
}

// tempBase is the folder of the links' folders: $TMPDIR unless its path
// is too long for the sockets (sun_path is 108 bytes; ssh adds 17 to the
// control path while it binds), else /tmp.
func tempBase() string {
	d := os.TempDir()
	if len(d)+len("/subdash-ssh-4194304-0123456789/host.sock")+17 > 100 { // pid_max is at most 4194304
		return "/tmp"
	}
	return d
}

// login starts the master and waits until ssh has logged in (its control
// socket appears) or ended (its reason is on its stderr). A login that may
// prompt runs in the foreground of o.Terminal and is bounded only by ctx
// (a person types); one without prompts by ConnectTimeout and
// batchLoginSlack.
func (l *Link) login(ctx context.Context) error {
	fg := !l.o.batch() && foreground(l.o.Terminal)
	o := l.o
	if !fg {
		o.Batch = true
	}
	cmd, err := o.masterCommand(append(masterArgs(l.t, o, l.cm), "--", l.t.Destination())...)
	if err != nil {
		return err
	}
	cmd.Stderr = &l.errs
	if fg {
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = int(l.o.Terminal.Fd())
	}
	if err := cmd.Start(); err != nil {
		return &Error{Kind: NoSSH, Text: fmt.Sprintf("%s could not be started: %v", l.o.shown(), err),
			Hint: "install OpenSSH's client, or fix SUBDASH_SSH_COMMAND"}
	}
	l.cmd = cmd
	go func() {
		l.status = exitStatus(cmd.Wait())
		close(l.done)
	}()
	if fg {
		defer takeTerminal(l.o.Terminal)
	}
	var bound <-chan time.Time
	if o.batch() {
		t := time.NewTimer(o.ConnectTimeout + batchLoginSlack)
		defer t.Stop()
		bound = t.C
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if isSocket(l.cm) {
			return nil
		}
		select {
		case <-l.done:
			if isSocket(l.cm) {
				break
			}
			return l.loginFailure()
		case <-ctx.Done():
			return ctx.Err()
		case <-bound:
			return &Error{Kind: NoAnswer, Text: fmt.Sprintf("ssh did not log in within %s", o.ConnectTimeout+batchLoginSlack),
				Hint: fmt.Sprintf("check that `ssh %s true` logs in without a prompt", l.t.Destination())}
		case <-tick.C:
		}
	}
}

// loginFailure is the error of a master that ended before it logged in.
func (l *Link) loginFailure() error {
	if l.status == 127 && l.o.Getenv("SUBDASH_SSH_COMMAND") != "" {
		return &Error{Kind: NoSSH, Text: fmt.Sprintf("%s could not be run: %s", l.o.shown(), l.errs.last()),
			Hint: "fix SUBDASH_SSH_COMMAND, or unset it to use ssh from PATH"}
	}
	return sshFailure(l.t, l.o, l.status, &l.errs, "ssh could not connect")
}

// isSocket reports whether a socket file is at p.
func isSocket(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSocket != 0
}

// Target returns the target the link reaches.
func (l *Link) Target() Target { return l.t }

// Socket returns the local end of the forward: a Unix socket that reaches
// the host's control socket there, one ssh channel per connection.
func (l *Link) Socket() string { return l.local }

// dialLocal connects to the local end of the forward by the rule of trust
// (socket.Dial, SPEC §6): its folder is the link's own, mode 0700, and
// the process listening there is the link's ssh, of this user.
func (l *Link) dialLocal(ctx context.Context) (net.Conn, error) {
	c, _, err := socket.Dial(ctx, l.local)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// RemoteSocket returns the host's control socket on the remote machine.
func (l *Link) RemoteSocket() string { return l.remote }

// Info returns what the host said of itself through the link when it was
// made (GET /v1/info): its pid there, folder, socket, protocol.
func (l *Link) Info() proto.Info { return l.info }

// Bridge returns what the bridge there said first (its versions and the
// machine's name); ok is false with ?socket=, where no bridge ran.
func (l *Link) Bridge() (h Hello, ok bool) {
	if l.hello == nil {
		return Hello{}, false
	}
	return *l.hello, true
}

// Done is closed when the link's ssh has ended: the connection dropped,
// the server ended it, or Close.
func (l *Link) Done() <-chan struct{} { return l.done }

// Down reports whether the link's ssh has ended.
func (l *Link) Down() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Err returns why the link's ssh ended (Kind Down, with ssh's last line),
// nil while it runs.
func (l *Link) Err() error {
	if !l.Down() {
		return nil
	}
	line := l.errs.reason()
	if line == "" {
		line = fmt.Sprintf("ssh ended (status %d) without saying why", l.status)
	}
	return &Error{Target: l.t.Name(), Kind: Down, Text: "the ssh link ended: " + line}
}

// Close ends the link's ssh (SIGTERM, which ends it within milliseconds
// also on a dead connection; SIGKILL after a second) and removes the
// folder of its sockets. The host there and its agents go on.
func (l *Link) Close() {
	l.closeOnce.Do(func() {
		if l.cmd != nil && l.cmd.Process != nil {
			_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-l.done:
			case <-time.After(time.Second):
				_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
				<-l.done
			}
		}
		if l.tmp != "" {
			_ = os.RemoveAll(l.tmp)
		}
	})
}

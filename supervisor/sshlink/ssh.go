package sshlink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	// DefaultConnectTimeout is ssh's ConnectTimeout for a link: a host
	// that does not answer ends in that time rather than TCP's two
	// minutes (SPEC §6: nothing hangs).
	DefaultConnectTimeout = 10 * time.Second
	// DefaultCallTimeout bounds each step after authentication (finding
	// the host, the forward, the first answer): SPEC §6's deadline of a
	// call, which starts once ssh has logged in.
	DefaultCallTimeout = 10 * time.Second
	// batchLoginSlack is how long a login without prompts (BatchMode)
	// may take beyond ConnectTimeout, which bounds the TCP connection and
	// the key exchange only.
	batchLoginSlack = 10 * time.Second
)

// Options say how a link runs ssh.
type Options struct {
	// Batch runs ssh with BatchMode=yes: it never asks anything, and a
	// key it cannot use without a prompt is an Auth error that says to
	// load it into ssh-agent. For `subdash ctl`, `subdash mcp` (whose
	// stdin is JSON-RPC) and every reconnect.
	Batch bool
	// Terminal, for a link that may prompt (Batch false), is the
	// terminal ssh asks its questions on (passphrase, host key, 2FA): ssh
	// runs in the foreground there until it has logged in, then the
	// terminal is given back to this process's group. nil: ssh stays in
	// a process group of its own and cannot prompt (BatchMode is set).
	Terminal *os.File
	// Getenv reads SUBDASH_SSH_COMMAND and SUBDASH_REMOTE_COMMAND;
	// os.Getenv when nil.
	Getenv func(string) string
	// Protocol and Version are this subdash's control protocol
	// (wire.Protocol) and module version, checked against the bridge's
	// Hello and the host's GET /v1/info.
	Protocol int
	Version  string
	// ConnectTimeout is ssh's ConnectTimeout (DefaultConnectTimeout when
	// 0); CallTimeout bounds each step after the login
	// (DefaultCallTimeout when 0).
	ConnectTimeout, CallTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Terminal == nil {
		o.Batch = true
	}
	return o
}

// batch reports whether ssh runs with BatchMode=yes.
func (o Options) batch() bool { return o.Batch || o.Terminal == nil }

// command returns the ssh command with args: SUBDASH_SSH_COMMAND run by
// /bin/sh with args after it, as git runs GIT_SSH_COMMAND (so the user's
// -F, -i, -J and -o apply; shellScript: exec'd, or guarded so that a
// signal reaches ssh), else ssh from PATH. Its process is in a
// process group of its own (a ctrl+c in the pager does not end the link)
// and gets SIGTERM when this process dies. The whole group is killed
// when ctx ends (a step's deadline).
func (o Options) command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	name, full, err := o.argv(args)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, name, full...)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, nil
}

// masterCommand is command for the link's master, which no context
// bounds: it lives until killed (Link.Close) or this process dies.
func (o Options) masterCommand(args ...string) (*exec.Cmd, error) {
	name, full, err := o.argv(args)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, full...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, nil
}

// argv is the program and arguments of command and masterCommand.
func (o Options) argv(args []string) (string, []string, error) {
	if sc := strings.TrimSpace(o.Getenv("SUBDASH_SSH_COMMAND")); sc != "" {
		return "/bin/sh", append([]string{"-c", shellScript(sc), "ssh"}, args...), nil
	}
	p, err := exec.LookPath("ssh")
	if err != nil {
		return "", nil, &Error{Kind: NoSSH, Text: "ssh is not on PATH (" + os.Getenv("PATH") + ")",
			Hint: "install OpenSSH's client (apt-get install openssh-client), or name yours in SUBDASH_SSH_COMMAND"}
	}
	return p, args, nil
}

// shown is how messages name the ssh command.
func (o Options) shown() string {
	if sc := strings.TrimSpace(o.Getenv("SUBDASH_SSH_COMMAND")); sc != "" {
		return "SUBDASH_SSH_COMMAND (" + sc + ")"
	}
	return "ssh"
}

// masterArgs are the arguments of the link's own ssh connection: a
// control master on cm that runs no command and keeps no connection
// beyond its own life, whose forwards must bind or it fails, which ends
// itself 15 s after the server stops answering (ServerAlive 5 s × 3), and
// whose local ends of forwards are the user's only (0600).
func masterArgs(t Target, o Options, cm string) []string {
	args := []string{"-n", "-N", "-M", "-S", cm,
		"-o", "ControlPersist=no",
		"-o", "ExitOnForwardFailure=yes",
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
		"-o", "ConnectTimeout=" + strconv.Itoa(int((o.ConnectTimeout+time.Second-1)/time.Second)),
		"-o", "StreamLocalBindMask=0177", "-o", "StreamLocalBindUnlink=yes",
	}
	if o.batch() {
		args = append(args, "-o", "BatchMode=yes")
	}
	return append(args, portArgs(t)...)
}

// muxArgs are the arguments of an ssh that works over the master on cm
// (a command there, a forward): never a connection of its own, never a
// prompt.
func muxArgs(t Target, cm string) []string {
	return append([]string{"-S", cm, "-o", "ControlMaster=no", "-o", "BatchMode=yes"}, portArgs(t)...)
}

func portArgs(t Target) []string {
	if t.Port != 0 {
		return []string{"-p", strconv.Itoa(t.Port)}
	}
	return nil
}

// exitStatus is the exit status of a finished command's error: 0 for nil,
// -1 when it did not exit normally (a signal).
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// sshFailure turns ssh's own failure (exit 255, or ended before it logged
// in) into an Error: its reason line, quoted, with what to do.
func sshFailure(t Target, o Options, status int, e *tail, doing string) *Error {
	line := e.reason()
	err := &Error{Target: t.Name(), Kind: kindOfLine(line)}
	switch {
	case line == "" && status == -1:
		line = "ssh was ended by a signal"
	case line == "":
		line = fmt.Sprintf("ssh exited with status %d and said nothing", status)
	}
	err.Text = fmt.Sprintf("%s: %s", doing, strings.TrimSuffix(line, "."))
	switch err.Kind {
	case Auth:
		if o.batch() {
			err.Hint = fmt.Sprintf("ssh may not ask for a passphrase or password here (BatchMode): load the key into ssh-agent (ssh-add), or check that `ssh %s true` logs in without a prompt", t.Destination())
		} else {
			err.Hint = fmt.Sprintf("check the user and key: `ssh %s true` shows the same", t.Destination())
		}
	case HostKey:
		err.Hint = fmt.Sprintf("ssh does not trust %s's host key: run `ssh %s` once in a terminal to check and accept it", t.Host, t.Destination())
	case Unreachable:
		err.Hint = fmt.Sprintf("check the host name, the network and that sshd runs on %s", t.Host)
	}
	return err
}

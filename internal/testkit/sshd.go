package testkit

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// SSHD is a real OpenSSH sshd on 127.0.0.1 that a test reaches with a
// key and no prompt (.ci/sshd-up.sh sets it up), for the tests of hosts
// on another machine (SPEC §9).
type SSHD struct {
	// Command is the ssh command that reaches it, for SUBDASH_SSH_COMMAND:
	// "ssh -F DIR/ssh_config" (that config replaces the user's).
	Command string
	// Host is the alias of a key login ("there"); Host+"-nokey" is refused
	// (Permission denied (publickey)) and Host+"-down" is a port where
	// nothing listens (Connection refused).
	Host string
	// Dir holds its keys, configs, pid file and sshd.log.
	Dir string

	up []string // the command and environment that start it again; nil for the shared one
}

// SSHDOptions choose a test sshd.
type SSHDOptions struct {
	// NoForwarding makes a server that refuses Unix-socket forwarding
	// (AllowTcpForwarding no, as a hardened one): always a sshd of the
	// test's own.
	NoForwarding bool
	// Own is a sshd of the test's own even where one is shared: one the
	// test may stop (Down) and start again (Up).
	Own bool
}

// StartSSHD returns the test sshd: the one SUBDASH_SSH_COMMAND and
// SUBDASH_SSH_HOST name (.ci/run starts one for the whole run), else one
// of the test's own, started by .ci/sshd-up.sh in t.TempDir() on a free
// port (StrictModes no, since the folder is under /tmp; about 0.5 s) and
// stopped by .ci/sshd-down.sh when the test ends. Where OpenSSH's server
// or client is missing the test is skipped saying how to install them,
// unless SUBDASH_REQUIRE_TOOLS=1 (CI, land.sh), where it fails.
func StartSSHD(t testing.TB, o SSHDOptions) SSHD {
	t.Helper()
	if c, h := os.Getenv("SUBDASH_SSH_COMMAND"), os.Getenv("SUBDASH_SSH_HOST"); c != "" && h != "" && !o.NoForwarding && !o.Own {
		return SSHD{Command: c, Host: h, Dir: os.Getenv("SUBDASH_SSHD_DIR")}
	}
	bin := os.Getenv("SUBDASH_SSHD_BIN")
	if bin == "" {
		bin = "/usr/sbin/sshd"
	}
	_, errClient := exec.LookPath("ssh")
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 || errClient != nil {
		const how = "no test sshd: install OpenSSH (apt-get install openssh-server openssh-client), or run eval \"$(bash .ci/sshd-up.sh)\" first, which installs it and prints SUBDASH_SSH_COMMAND and SUBDASH_SSH_HOST"
		Missing(t, how)
	}
	_, file, _, _ := runtime.Caller(0)
	ci := filepath.Join(filepath.Dir(file), "..", "..", ".ci")
	dir := t.TempDir()
	var last string
	for try := 0; try < 3; try++ { // a free port may be taken before sshd binds it
		port, err := freePort()
		if err != nil {
			t.Fatalf("no free port for a test sshd: %v", err)
		}
		fwd := "local"
		if o.NoForwarding {
			fwd = "no"
		}
		up := []string{filepath.Join(ci, "sshd-up.sh"), dir, "SUBDASH_SSHD_PORT=" + port, "SUBDASH_SSHD_STRICTMODES=no", "SUBDASH_SSHD_FORWARDING=" + fwd, "SUBDASH_SSHD_BIN=" + bin}
		t0 := time.Now()
		out, err := runUp(up)
		if err != nil {
			last = err.Error()
			_ = exec.Command("bash", filepath.Join(ci, "sshd-down.sh"), dir).Run()
			continue
		}
		t.Cleanup(func() { _ = exec.Command("bash", filepath.Join(ci, "sshd-down.sh"), dir).Run() })
		env := exports(out)
		s := SSHD{Command: env["SUBDASH_SSH_COMMAND"], Host: env["SUBDASH_SSH_HOST"], Dir: env["SUBDASH_SSHD_DIR"], up: up}
		if s.Command == "" || s.Host == "" {
			t.Fatalf("sshd-up.sh printed no SUBDASH_SSH_COMMAND or SUBDASH_SSH_HOST: %q", out)
		}
		t.Logf("a test sshd on 127.0.0.1:%s in %s (%.2f s)", port, dir, time.Since(t0).Seconds())
		return s
	}
	t.Fatalf("a test sshd did not start (.ci/sshd-up.sh %s): %s", dir, last)
	return SSHD{}
}

// runUp runs sshd-up.sh as up says (the script, its folder, then the
// environment) and returns what it printed to eval.
func runUp(up []string) ([]byte, error) {
	cmd := exec.Command("bash", up[0], up[1])
	cmd.Env = append(os.Environ(), up[2:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Down stops the sshd and every session it serves (.ci/sshd-down.sh), as
// a machine whose sshd went away: an ssh connected through it ends
// ("Connection closed by remote host") and a new one is refused. Only
// for a sshd of the test's own (SSHDOptions.Own).
func (s SSHD) Down(t testing.TB) {
	t.Helper()
	if s.up == nil {
		t.Fatal("Down of the shared test sshd: ask for SSHDOptions{Own: true}")
	}
	if out, err := exec.Command("bash", filepath.Join(filepath.Dir(s.up[0]), "sshd-down.sh"), s.up[1]).CombinedOutput(); err != nil {
		t.Fatalf("sshd-down.sh: %v %s", err, out)
	}
}

// Up starts the sshd again after Down, on the same port with the same
// keys.
func (s SSHD) Up(t testing.TB) {
	t.Helper()
	if s.up == nil {
		t.Fatal("Up of the shared test sshd: ask for SSHDOptions{Own: true}")
	}
	if _, err := runUp(s.up); err != nil {
		t.Fatalf("sshd-up.sh again: %v", err)
	}
}

// Use sets SUBDASH_SSH_COMMAND for the rest of the test (t.Setenv) and
// returns the host alias.
func (s SSHD) Use(t *testing.T) string {
	t.Setenv("SUBDASH_SSH_COMMAND", s.Command)
	return s.Host
}

// freePort is a TCP port of 127.0.0.1 free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// exports reads the `export NAME="value"` lines of sshd-up.sh.
func exports(out []byte) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, val, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			env[name] = strings.Trim(val, `"`)
		}
	}
	return env
}

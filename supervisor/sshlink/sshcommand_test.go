package sshlink

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// TestShellScriptExecsASimpleCommand: exec goes before the command word
// of one simple command (after its assignments; quotes, $VAR and
// redirections allowed), and anything else is guarded.
func TestShellScriptExecsASimpleCommand(t *testing.T) {
	for _, c := range []struct{ sc, want string }{
		{"ssh -F /x/cfg", `exec ssh -F /x/cfg "$@"`},
		{"FOO=1 BAR='a b' ssh -F cfg", `FOO=1 BAR='a b' exec ssh -F cfg "$@"`},
		{`ssh -F "$HOME/my cfg" -o 'ProxyCommand=nc %h 22; true'`, `exec ssh -F "$HOME/my cfg" -o 'ProxyCommand=nc %h 22; true' "$@"`},
		{`ssh -o a\;b 2>>/tmp/ssh.log`, `exec ssh -o a\;b 2>>/tmp/ssh.log "$@"`},
		{"exec ssh -v", `exec ssh -v "$@"`},
	} {
		if got := shellScript(c.sc); got != c.want {
			t.Errorf("%s: %q, want %q", c.sc, got, c.want)
		}
	}
	for _, sc := range []string{
		"true; ssh", "ssh-add -l >/dev/null || ssh-add; ssh", "ssh | tee", "ssh &", "(ssh)",
		"$(command -v ssh) -F cfg", "`which ssh`", `ssh -F "$(cat f)"`, "if true; then ssh; fi",
		"command ssh", "FOO=1", "2>/dev/null ssh", "ssh 'unclosed", "ssh\nssh",
	} {
		if got := shellScript(sc); got != guardScript(sc) {
			t.Errorf("%q: %q, want it guarded", sc, got)
		}
	}
}

// TestNoSSHOutlivesItsShell: whatever the shape of SUBDASH_SSH_COMMAND,
// ssh gets ssh's arguments and stdin and exits with its status, and a
// SIGTERM to the shell (what Pdeathsig sends when a viewer is killed with
// SIGKILL) ends ssh too; before, a command with an assignment or a list
// left ssh running under init.
func TestNoSSHOutlivesItsShell(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-ssh")
	// It says its pid, arguments and stdin, then waits as a master does.
	script := "#!/bin/sh\nout=$1; shift\nread -r line\necho \"$$ $* <$line>\" >\"$out.tmp\"; mv \"$out.tmp\" \"$out\"\nexec sleep 300\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, sc := range []string{
		fake,
		"SUBDASH_X=1 " + fake,
		`"` + fake + `"`,
		": ; " + fake,
		"true && " + fake,
		"$(echo " + fake + ")",
	} {
		out := filepath.Join(dir, "out"+strconv.Itoa(i))
		cmd := exec.Command("/bin/sh", "-c", shellScript(sc), "ssh", out, "-o", "a b", "there")
		cmd.Stdin = strings.NewReader("the finder\n")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		group := cmd.Process.Pid
		t.Cleanup(func() { _ = syscall.Kill(-group, syscall.SIGKILL) })
		ended := make(chan error, 1)
		go func() { ended <- cmd.Wait() }()
		said := testkit.Poll(t, 10*time.Second, sc+": ssh to start", func() (string, bool) {
			b, err := os.ReadFile(out)
			return string(b), err == nil
		})
		pid, rest, _ := strings.Cut(strings.TrimSpace(said), " ")
		if rest != "-o a b there <the finder>" {
			t.Errorf("%s: ssh got %q, want its arguments and stdin", sc, rest)
		}
		ssh, _ := strconv.Atoi(pid)
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM) // the shell only, as Pdeathsig
		select {
		case err := <-ended:
			t.Logf("%s: the shell ended (%v)", sc, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the shell runs on after SIGTERM", sc)
		}
		testkit.Eventually(t, 10*time.Second, fmt.Sprintf("%s: ssh (pid %d) to end with its shell", sc, ssh), func() bool { return testkit.Ended(ssh) })
	}

	for _, sc := range []string{"exit 7", ": ; exit 7"} {
		cmd := exec.Command("/bin/sh", "-c", shellScript("sh -c '"+sc+"'"), "ssh")
		if st := exitStatus(cmd.Run()); st != 7 {
			t.Errorf("%s: status %d, want 7", sc, st)
		}
	}
	if st := exitStatus(exec.Command("/bin/sh", "-c", shellScript(": ; /nope/ssh"), "ssh").Run()); st != 127 {
		t.Errorf("a missing ssh in a list: status %d, want 127 (loginFailure's NoSSH)", st)
	}
}

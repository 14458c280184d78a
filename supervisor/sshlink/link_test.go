package sshlink

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// sshHost returns the host alias of a test sshd (testkit.StartSSHD: the
// one .ci/run started, else one of the test's own) and sets
// SUBDASH_SSH_COMMAND for the test.
func sshHost(t *testing.T) string {
	t.Helper()
	return testkit.StartSSHD(t, testkit.SSHDOptions{}).Use(t)
}

// fakeHost serves GET /v1/info on a Unix socket in a folder of its own and
// counts the requests; it returns the socket.
func fakeHost(t *testing.T, pid int, asked *atomic.Int64) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		_ = json.NewEncoder(w).Encode(proto.Info{PID: pid, Protocol: 1, Socket: sock})
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

// get asks GET /v1/info on socket and returns the pid answered.
func get(ctx context.Context, dial func(context.Context) (net.Conn, error)) (int, error) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }, DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://subdash/v1/info", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var info proto.Info
	b, _ := io.ReadAll(resp.Body)
	return info.PID, json.Unmarshal(b, &info)
}

func opts() Options { return Options{Batch: true, Protocol: 1, Version: "test"} }

// TestALinkOverARealSSHD: through a real sshd, a link reaches a host's
// socket (?socket=), its local end is the user's only, every connection
// reaches the host, and Close ends ssh and leaves no file behind.
func TestALinkOverARealSSHD(t *testing.T) {
	host := sshHost(t)
	var asked atomic.Int64
	sock := fakeHost(t, 4242, &asked)
	tg, err := ParseTarget("ssh://" + host + "?socket=" + sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Dial(ctx, tg, opts())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("took %+v", l.Took)
	if l.Info().PID != 4242 || l.RemoteSocket() != sock || asked.Load() != 1 {
		t.Fatalf("info %+v, remote %s, asked %d", l.Info(), l.RemoteSocket(), asked.Load())
	}
	fi, err := os.Stat(l.Socket())
	di, derr := os.Stat(filepath.Dir(l.Socket()))
	if err != nil || derr != nil || fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("local end %v %v, folder %v %v: want 0600 in 0700", fi.Mode(), err, di.Mode(), derr)
	}
	for range 3 {
		var d net.Dialer
		if pid, err := get(ctx, func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", l.Socket()) }); err != nil || pid != 4242 {
			t.Fatalf("through the link: pid %d, %v", pid, err)
		}
	}
	pid := l.cmd.Process.Pid
	l.Close()
	if !l.Down() || syscall.Kill(pid, 0) == nil {
		t.Fatal("ssh runs on after Close")
	}
	if _, err := os.Stat(filepath.Dir(l.Socket())); !os.IsNotExist(err) {
		t.Fatalf("the link's folder is left: %v", err)
	}
}

// TestLinkFailuresSayWhat: each failure names the target and says what
// happened and what to do, within the deadlines: a refused key (lasting:
// load it into ssh-agent), nothing listening (worth a retry), no socket
// there.
func TestLinkFailuresSayWhat(t *testing.T) {
	host := sshHost(t)
	tmp := t.TempDir() // the links' folders: this test's only, not those of links of other tests running at once
	t.Setenv("TMPDIR", tmp)
	if tempBase() != tmp {
		t.Fatalf("tempBase %s, want %s", tempBase(), tmp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	missing := filepath.Join(t.TempDir(), "none.sock")
	for _, c := range []struct {
		target string
		kind   Kind
		says   []string
	}{
		{"ssh://" + host + "-nokey?socket=" + missing, Auth, []string{"Permission denied (publickey)", "load the key into ssh-agent"}},
		{"ssh://" + host + "-down?socket=" + missing, Unreachable, []string{"Connection refused", "that sshd runs on " + host + "-down"}},
		{"ssh://" + host + "/src/app?socket=" + missing, NoHost, []string{"no subdash serves the socket " + missing + " there (there is no such socket)", "cd /src/app && subdash serve --socket " + missing}},
	} {
		tg, _ := ParseTarget(c.target)
		start := time.Now()
		_, err := Dial(ctx, tg, opts())
		le, ok := err.(*Error)
		if !ok || le.Kind != c.kind || !strings.HasPrefix(err.Error(), tg.Name()+": ") {
			t.Errorf("%s: %v; want a %d naming the target", c.target, err, c.kind)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", c.target, err, s)
			}
		}
		t.Logf("%s in %s: %v", c.target, time.Since(start).Round(time.Millisecond), err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "subdash-ssh-*")); len(left) > 0 {
		t.Errorf("a failed link left its folders %s", left)
	}
}

// TestACarrierLinksAgain: when the link's ssh dies, the next connection
// makes a new link; Relink says it reconnects and does; a host that
// stopped (its stream ended, ssh alive) is not relinked; a lasting
// failure (a refused key) ends the tries at once.
func TestACarrierLinksAgain(t *testing.T) {
	host := sshHost(t)
	var asked atomic.Int64
	sock := fakeHost(t, 77, &asked)
	tg, _ := ParseTarget("ssh://" + host + "?socket=" + sock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Connect(ctx, tg, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := c.Link()
	_ = syscall.Kill(-first.cmd.Process.Pid, syscall.SIGKILL) // the group: ssh, and the sh of SUBDASH_SSH_COMMAND
	testkit.Eventually(t, 10*time.Second, "the killed ssh to be down", first.Down)
	if pid, err := get(ctx, c.DialContext); err != nil || pid != 77 || c.Link() == first {
		t.Fatalf("after ssh died: pid %d, %v (a new link: %v)", pid, err, c.Link() != first)
	}

	var said []string
	say := func(s string) { said = append(said, s) }
	start := time.Now()
	if again, err := c.Relink(ctx, io.EOF, true, say); again || err != nil || len(said) != 0 || time.Since(start) < hostStopWait {
		t.Fatalf("a host that stopped (ssh alive): relinked %v, %v, said %q after %s", again, err, said, time.Since(start))
	}
	second := c.Link()
	if again, err := c.Relink(ctx, io.ErrUnexpectedEOF, false, say); !again || err != nil || c.Link() == second || second.Down() == false {
		t.Fatalf("a silent link: relinked %v, %v", again, err)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "reconnecting to "+tg.Name()+" (") {
		t.Fatalf("said %q", said)
	}
	if pid, err := get(ctx, c.DialContext); err != nil || pid != 77 {
		t.Fatalf("after Relink: pid %d, %v", pid, err)
	}

	c.t.Host = host + "-nokey" // the key is refused from now on
	start = time.Now()
	again, err := c.Relink(ctx, io.EOF, false, say)
	if again || err == nil || !strings.Contains(err.Error(), "reconnecting to ") || !strings.Contains(err.Error(), "Permission denied") || time.Since(start) > 10*time.Second {
		t.Fatalf("a refused key: relinked %v, %v after %s; want to give up at once", again, err, time.Since(start))
	}
}

// TestALinksLocalEndFollowsTheRuleOfTrust: the local end of a link is a
// control socket like any other (SPEC §6): while its folder is one others
// may write in, a carrier refuses to dial it, naming the folder and what
// to do, and sends nothing; made private again, it reaches the host.
func TestALinksLocalEndFollowsTheRuleOfTrust(t *testing.T) {
	host := sshHost(t)
	var asked atomic.Int64
	sock := fakeHost(t, 78, &asked)
	tg, _ := ParseTarget("ssh://" + host + "?socket=" + sock)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, tg, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	folder := filepath.Dir(c.Link().Socket())
	if err := os.Chmod(folder, 0o777); err != nil {
		t.Fatal(err)
	}
	before := asked.Load()
	_, err = get(ctx, c.DialContext)
	var untrusted *socket.UntrustedError
	if !errors.As(err, &untrusted) || !strings.Contains(err.Error(), "control socket folder "+folder+" has mode 0777") || !strings.Contains(err.Error(), "chmod go-w "+folder) {
		t.Fatalf("dial through a link whose folder has mode 0777: %v, want the rule of trust's refusal", err)
	}
	if asked.Load() != before {
		t.Fatal("a refused dial reached the host")
	}
	if err := os.Chmod(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	if pid, err := get(ctx, c.DialContext); err != nil || pid != 78 {
		t.Fatalf("the folder made private again: pid %d, %v", pid, err)
	}
}

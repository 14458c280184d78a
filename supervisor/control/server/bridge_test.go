package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/sshlink"
)

// bridge runs Bridge with env and returns its two lines and status.
func bridge(t *testing.T, env map[string]string, args ...string) (sshlink.Hello, sshlink.Found, int, string) {
	t.Helper()
	var out, errs strings.Builder
	status := Bridge(args, &out, &errs, func(k string) string { return env[k] })
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	var h sshlink.Hello
	var f sshlink.Found
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &h) != nil {
		t.Fatalf("the first line is not the bridge's hello: %q", out.String())
	}
	if sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("second line %q: %v", sc.Text(), err)
		}
	}
	return h, f, status, errs.String()
}

// TestTheBridgeFindsTheHost: `subdash bridge --print-socket --dir D`
// states its versions first, then finds the host of D through its host
// lock (an ssh session has another XDG_RUNTIME_DIR, or none) or SPEC §6's
// default path, and says where it looked when none serves D: with the
// command to run there.
func TestTheBridgeFindsTheHost(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	s := newSupervisorWith(t, func(c *supervisor.Config) { c.StateDir = state })
	srv, _ := serve(t, s)
	dir := s.Config().Dir
	h, f, status, _ := bridge(t, map[string]string{"SUBDASH_STATE_DIR": state}, "--print-socket", "--dir", dir)
	if h.Bridge != sshlink.BridgeVersion || h.Protocol != wire.Protocol || h.Version == "" || h.Host == "" {
		t.Fatalf("hello %+v", h)
	}
	if status != bridgeExitFound || f.Socket != srv.Path() || f.Info == nil || f.Info.PID != os.Getpid() || f.Info.Dir != dir {
		t.Fatalf("through the host lock: status %d, %+v", status, f)
	}

	// The default path under XDG_RUNTIME_DIR, the lock not known.
	xdg := t.TempDir()
	s2 := newSupervisorWith(t, func(c *supervisor.Config) { c.Socket = socket.Default(c.Dir, xdg, os.Getuid()) })
	srv2, _ := serve(t, s2)
	_, f, status, _ = bridge(t, map[string]string{"XDG_RUNTIME_DIR": xdg, "HOME": t.TempDir()}, "--print-socket", "--dir="+s2.Config().Dir)
	if status != bridgeExitFound || f.Socket != srv2.Path() {
		t.Fatalf("through XDG_RUNTIME_DIR: status %d, %+v", status, f)
	}

	// Nobody serves this folder.
	empty := t.TempDir()
	_, f, status, stderr := bridge(t, map[string]string{"HOME": t.TempDir()}, "--print-socket", "--dir", empty)
	tmp := socket.Default(empty, "", os.Getuid())
	if status != bridgeExitNoHost || f.Code != sshlink.CodeNoHost || !strings.Contains(f.Error, "no subdash serves "+empty+" on ") ||
		!strings.Contains(f.Error, tmp+" (none)") || !strings.Contains(f.Error, "start one there: cd "+empty+" && subdash serve") || !strings.Contains(stderr, f.Error) {
		t.Fatalf("no host: status %d, %+v, stderr %q", status, f, stderr)
	}
	_, f, status, _ = bridge(t, nil, "--print-socket", "--dir", filepath.Join(empty, "nope"))
	if status != 3 || f.Code != sshlink.CodeNoFolder || !strings.Contains(f.Error, "no folder "+filepath.Join(empty, "nope")+" on ") {
		t.Fatalf("no folder: status %d, %+v", status, f)
	}
	_, f, status, _ = bridge(t, nil, "--dir", "relative")
	if status != bridgeExitUsage || f.Code != sshlink.CodeUsage {
		t.Fatalf("usage: status %d, %+v", status, f)
	}
}

// TestTheBridgeSaysAHungHost: a socket whose process accepts the
// question but never answers (a host stopped or hung) is not "no subdash
// serves": the bridge says which process it is and that it does not
// answer (code hung, exit 4), within BridgeProbeTimeout and a little.
func TestTheBridgeSaysAHungHost(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	sock := socket.Default(dir, xdg, os.Getuid())
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer func() { _ = c.Close() }() // held open, never answered
		}
	}()
	start := time.Now()
	_, f, status, stderr := bridge(t, map[string]string{"XDG_RUNTIME_DIR": xdg, "HOME": t.TempDir()}, "--print-socket", "--dir", dir)
	took := time.Since(start)
	if status != bridgeExitHung || f.Code != sshlink.CodeHung || f.Socket != "" ||
		!strings.HasPrefix(f.Error, "on ") || !strings.Contains(f.Error, fmt.Sprintf("%s (pid %d, ", sock, os.Getpid())) ||
		!strings.Contains(f.Error, fmt.Sprintf("accepted the connection but did not answer within %s", BridgeProbeTimeout)) ||
		!strings.Contains(stderr, f.Error) || took > 2*BridgeProbeTimeout {
		t.Fatalf("a hung host: status %d in %s, %+v, stderr %q", status, took, f, stderr)
	}
}

// TestTheBridgeRefusesAFolderOthersMayWriteIn: at the far end of ssh the
// bridge follows the rule of trust (SPEC §6) as any client does: a host's
// socket in a folder others may write in is not taken, and the answer
// says why and what to do.
func TestTheBridgeRefusesAFolderOthersMayWriteIn(t *testing.T) {
	xdg := t.TempDir()
	s := newSupervisorWith(t, func(c *supervisor.Config) { c.Socket = socket.Default(c.Dir, xdg, os.Getuid()) })
	srv, _ := serve(t, s)
	folder := filepath.Dir(srv.Path())
	if err := os.Chmod(folder, 0o777); err != nil {
		t.Fatal(err)
	}
	_, f, status, _ := bridge(t, map[string]string{"XDG_RUNTIME_DIR": xdg, "HOME": t.TempDir()}, "--print-socket", "--dir", s.Config().Dir)
	want := fmt.Sprintf("%s (control socket folder %s has mode 0777: its group and every other user can write in it, and so put a socket of their own there; run chmod go-w %s,", srv.Path(), folder, folder)
	if status != bridgeExitNoHost || f.Socket != "" || f.Code != sshlink.CodeNoHost || !strings.Contains(f.Error, want) {
		t.Fatalf("a host's socket in a folder of mode 0777: status %d, %+v; want it refused, saying %q", status, f, want)
	}
}

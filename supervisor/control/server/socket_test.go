package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/socket"
)

func TestSocketAndFolderModes(t *testing.T) {
	s := newSupervisor(t, 4)
	// An existing folder of ours with a wider mode is tightened.
	folder := filepath.Dir(s.Config().Socket)
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, s)
	for path, want := range map[string]os.FileMode{folder: os.ModeDir | 0o700, srv.Path(): os.ModeSocket | 0o600} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
	}
}

func TestChosenFolderKeepsItsMode(t *testing.T) {
	project := filepath.Join(t.TempDir(), "project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := prepareFolder(project, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(project); fi.Mode().Perm() != 0o755 {
		t.Fatalf("a folder chosen with --socket was changed to %v", fi.Mode().Perm())
	}
	fresh := filepath.Join(project, "new")
	if err := prepareFolder(fresh, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Fatalf("a folder created for the socket has mode %v", fi.Mode().Perm())
	}
}

// TestChosenFolderOthersMayWriteIsRefused: a folder chosen with --socket
// that group or others may write in is refused by the rule of trust
// (SPEC §6), saying chmod go-w, and left as it is.
func TestChosenFolderOthersMayWriteIsRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o775, 0o777} {
		project := filepath.Join(t.TempDir(), "project")
		if err := os.Mkdir(project, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(project, mode); err != nil {
			t.Fatal(err)
		}
		ln, err := listenUnix(filepath.Join(project, "s.sock"), project, os.Geteuid())
		if err == nil {
			ln.Close() //nolint:errcheck // the failure is the listen that should not have worked
		}
		var untrusted *socket.UntrustedError
		if !errors.As(err, &untrusted) || !strings.Contains(err.Error(), fmt.Sprintf("control socket folder %s has mode %04o", project, mode)) ||
			!strings.Contains(err.Error(), "chmod go-w "+project) {
			t.Errorf("listen in a folder of mode %v: %v, want the rule of trust's refusal", mode, err)
		}
		if fi, _ := os.Stat(project); fi.Mode().Perm() != mode {
			t.Errorf("a folder chosen with --socket was changed to %v", fi.Mode().Perm())
		}
	}
}

// TestClientRefusesASocketOthersCouldHold: once a host's folder is made
// writable by others, a client refuses its socket by the rule of trust
// (SPEC §6) and sends nothing: no agent is spawned.
func TestClientRefusesASocketOthersCouldHold(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, c := serve(t, s)
	folder := filepath.Dir(srv.Path())
	if err := os.Chmod(folder, 0o777); err != nil {
		t.Fatal(err)
	}
	fresh := client.NewClient(srv.Path(), "")
	_, err := fresh.Spawn(context.Background(), "SECRET")
	var untrusted *socket.UntrustedError
	want := fmt.Sprintf("control socket folder %s has mode 0777: its group and every other user can write in it, and so put a socket of their own there; run chmod go-w %s", folder, folder)
	if !errors.As(err, &untrusted) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("spawn through a folder of mode 0777: %v, want it to start %q", err, want)
	}
	if err := os.Chmod(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	if n := len(mustList(t, s).Agents); n != 0 {
		t.Fatalf("a refused client spawned %d agents", n)
	}
	if _, err := c.List(context.Background()); err != nil {
		t.Fatalf("the folder made private again: %v", err)
	}
}

func TestSecondServerIsRefusedNamingTheHolder(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, _ := serve(t, s)
	_, err := Listen(s)
	var inUse *InUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("second Listen: %v, want *InUseError", err)
	}
	if inUse.PID != os.Getpid() {
		t.Errorf("holder pid = %d, want %d (this process)", inUse.PID, os.Getpid())
	}
	want := fmt.Sprintf("another subdash (pid %d) is serving %s on %s;", os.Getpid(), s.Config().Dir, srv.Path())
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message = %q, want it to start %q", err, want)
	}
}

// TestInUseNamesTheOtherFolder: a second subdash for another folder given
// the same --socket is told which folder the holder serves, not its own.
func TestInUseNamesTheOtherFolder(t *testing.T) {
	first := newSupervisor(t, 4)
	serve(t, first)
	second := newSupervisor(t, 4)
	cfg := second.Config()
	cfg.Socket = first.Config().Socket
	other, err := supervisor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := other.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	_, err = Listen(other)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Dir != first.Config().Dir || !strings.Contains(err.Error(), "is serving "+first.Config().Dir+" on") {
		t.Fatalf("Listen on another folder's socket: %v", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	s := newSupervisor(t, 4)
	path := s.Config().Socket
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	// A socket file whose listener died without removing it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() //nolint:errcheck // the socket file is what the test needs, kept by SetUnlinkOnClose
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket file missing: %v", err)
	}
	_, c := serve(t, s)
	if _, err := c.List(context.Background()); err != nil {
		t.Fatalf("list after replacing a stale socket: %v", err)
	}
}

// TestSilentHolderIsNotReplaced: a socket whose holder accepts
// connections (the kernel does, for a stopped process) but never answers is
// not stale: Listen refuses, saying the holder does not answer, and leaves
// the socket to it (SPEC §6).
func TestSilentHolderIsNotReplaced(t *testing.T) {
	s := newSupervisor(t, 4)
	path := s.Config().Socket
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	// Listening and never accepting: what a host under SIGSTOP looks like.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() //nolint:errcheck // cleanup of a listener the test only holds
	before, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Listen(s)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.NoAnswer == nil || inUse.NoAnswer.PID != os.Getpid() {
		t.Fatalf("Listen beside a silent holder: %v, want *InUseError with NoAnswer naming pid %d", err, os.Getpid())
	}
	// The holder is this test process: running, and not a subdash.
	want := fmt.Sprintf("the process serving %s (pid %d, %s) accepted the connection but did not answer within 2s; it is running, so it is hung or not a subdash host", path, os.Getpid(), filepath.Base(os.Args[0]))
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "it still holds the socket, so this subdash does not replace it") {
		t.Errorf("message = %q, want it to start %q and say the socket is not replaced", err, want)
	}
	// The holder still has its socket file, not a new one.
	if after, err := os.Lstat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the silent holder's socket file was replaced or removed: %v", err)
	}
}

func TestSocketPathProblemsAreRefused(t *testing.T) {
	s := newSupervisor(t, 4)
	dir := s.Config().Dir
	notSocket := filepath.Join(dir, "plain")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	sticky := filepath.Join(dir, "sticky")
	if err := os.Mkdir(sticky, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		notSocket:                                         "exists and is not a socket",
		filepath.Join(link, "s.sock"):                     "is not a folder (it is a symbolic link)",
		filepath.Join(sticky, "s.sock"):                   "is shared (mode 1777: sticky, like /tmp)",
		"/" + strings.Repeat("x", 200):                    "is too long",
		filepath.Join(notSocket, "s.sock"):                "is not a folder",
		filepath.Join(dir, "missing", "deeper", "s.sock"): "does not exist; pass a --socket in an existing folder",
	} {
		ln, err := listenUnix(path, dir, os.Getuid())
		if err == nil {
			ln.Close() //nolint:errcheck // the failure is the listen that should not have worked
			t.Errorf("%s: listened, want an error containing %q", path, want)
			continue
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Dir(path)) {
			t.Errorf("%s: %v, want %q naming the path", path, err, want)
		}
	}
}

func TestFolderOfAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	dir := t.TempDir()
	folder := filepath.Join(dir, "theirs")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(folder, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := listenUnix(filepath.Join(folder, "s.sock"), dir, os.Getuid())
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534 (nobody), not to you (uid 0)") {
		t.Fatalf("listen in a folder of uid 65534: %v", err)
	}
}

func TestPeerCredentialsOfARealConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() //nolint:errcheck // cleanup of a listener the test only holds
	accepted := make(chan *net.UnixConn, 1)
	go func() {
		c, _ := ln.AcceptUnix()
		accepted <- c
	}()
	dialled, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer dialled.Close() //nolint:errcheck // cleanup: the test reads only credentials
	server := <-accepted
	defer server.Close() //nolint:errcheck // cleanup: the test reads only credentials
	for _, c := range []*net.UnixConn{server, dialled.(*net.UnixConn)} {
		p, err := socket.PeerOf(c)
		if err != nil || p.PID != os.Getpid() || p.UID != os.Getuid() {
			t.Fatalf("peer = %+v, %v; want pid %d uid %d", p, err, os.Getpid(), os.Getuid())
		}
	}
}

func TestCheckPeer(t *testing.T) {
	if err := checkPeer(socket.Peer{PID: 1, UID: 1000}, nil, 1000); err != nil {
		t.Errorf("same user refused: %v", err)
	}
	err := checkPeer(socket.Peer{PID: 1, UID: 0}, nil, 1000)
	if err == nil || err.Error() != "connection refused: this subdash control socket belongs to uid 1000; uid 0 may not use it" {
		t.Errorf("root connecting to a user's socket: %v", err)
	}
	if err := checkPeer(socket.Peer{}, errors.New("EBADF"), 0); err == nil {
		t.Error("unknown peer accepted")
	}
}

func TestConnectionOfAnotherUserIsRefused(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, err := Listen(s)
	if err != nil {
		t.Fatal(err)
	}
	// Pretend the socket belongs to someone else: this process is then
	// "another user" to it.
	other := os.Getuid() + 1
	srv.ln.uid = other
	refused := make(chan socket.Peer, 1)
	srv.ln.refused = func(p socket.Peer, _ error) { refused <- p }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }() //nolint:errcheck // ctx's error: the test ends the server
	c := client.NewClient(srv.Path(), s.Config().Dir)
	defer c.CloseIdleConnections()
	_, err = c.Spawn(context.Background(), "hello")
	specError(t, err, wire.CodeForbidden, fmt.Sprintf("connection refused: this subdash control socket belongs to uid %d; uid %d may not use it", other, os.Getuid()))
	if p := <-refused; p.PID != os.Getpid() {
		t.Errorf("refused peer = %+v", p)
	}
	if n := len(mustList(t, s).Agents); n != 0 {
		t.Errorf("a refused connection spawned %d agents", n)
	}
}

func TestNotServingError(t *testing.T) {
	dir := t.TempDir()
	c := client.NewClient(filepath.Join(dir, "none.sock"), dir)
	_, err := c.Spawn(context.Background(), "x")
	want := fmt.Sprintf("no subdash is serving %s (socket %s); start subdash or subdash serve", dir, filepath.Join(dir, "none.sock"))
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

package socket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// folderOf makes a folder named name in a private temporary folder, with
// mode (chmod, so the umask takes nothing away).
func folderOf(t *testing.T, name string, mode fs.FileMode) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// untrusted fails the test unless err is *UntrustedError whose message
// holds each of want.
func untrusted(t *testing.T, err error, want ...string) {
	t.Helper()
	var ue *UntrustedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UntrustedError", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}
}

// A folder is trusted when no one but its owner may write in it, whatever
// others may read; any write bit of group or others is refused, saying
// the mode and chmod go-w, and a sticky one as shared, like /tmp (no
// chmod of a shared folder is suggested).
func TestFolderModes(t *testing.T) {
	uid := os.Geteuid()
	for _, mode := range []fs.FileMode{0o700, 0o750, 0o755, 0o711, fs.ModeSticky | 0o700} {
		if err := CheckFolder(folderOf(t, "ok", mode), uid); err != nil {
			t.Errorf("mode %v: %v", mode, err)
		}
	}
	for mode, who := range map[fs.FileMode]string{
		0o770: "its group can write in it",
		0o702: "every other user can write in it",
		0o777: "its group and every other user can write in it",
		0o757: "every other user can write in it",
	} {
		dir := folderOf(t, "project", mode)
		err := CheckFolder(dir, uid)
		untrusted(t, err, dir, fmt.Sprintf("has mode %04o: %s", mode, who), "chmod go-w "+dir,
			"pass --socket with a path in a private folder")
		if ue := (*UntrustedError)(nil); errors.As(err, &ue) && ue.Folder != dir {
			t.Errorf("Folder = %q, want %q", ue.Folder, dir)
		}
	}
	for _, mode := range []fs.FileMode{fs.ModeSticky | 0o777, fs.ModeSticky | 0o770} {
		dir := folderOf(t, "shared", mode)
		err := CheckFolder(dir, uid)
		untrusted(t, err, dir, "is shared (mode 1", "sticky, like /tmp): other users can put a socket in it")
		if strings.Contains(err.Error(), "chmod") {
			t.Errorf("a shared folder is not to be chmodded: %v", err)
		}
	}
}

// The default folders' refusals say how to choose another folder with
// XDG_RUNTIME_DIR as well as --socket.
func TestDefaultFolderSaysXDGRuntimeDir(t *testing.T) {
	uid := os.Geteuid()
	for _, name := range []string{"subdash", fmt.Sprintf("subdash-%d", uid)} {
		dir := folderOf(t, name, 0o777)
		untrusted(t, CheckFolder(dir, uid), "chmod go-w "+dir, "set XDG_RUNTIME_DIR to a private folder of yours, or pass --socket")
	}
}

// A folder of another user is refused naming its owner; subdash's default
// folder held by another user is said to be so, with what to do.
func TestFolderOfAnotherUser(t *testing.T) {
	me := os.Geteuid()
	other := me + 1 // the folder is ours, so it is "another user's" to other
	dir := folderOf(t, "project", 0o700)
	untrusted(t, CheckFolder(dir, other), dir, fmt.Sprintf("belongs to uid %d", me), fmt.Sprintf("not to you (uid %d)", other),
		"remove it or pass --socket")
	def := folderOf(t, fmt.Sprintf("subdash-%d", other), 0o777)
	untrusted(t, CheckFolder(def, other), def, fmt.Sprintf("not to you (uid %d): another user made subdash's default folder, and a socket there would hand your tasks to them", other),
		"have it removed (rm -r "+def, "set XDG_RUNTIME_DIR")
	if me != 0 {
		return
	}
	// As root: a real folder of uid 65534 with mode 0777, as another user
	// would make it, named by that user's name where the system has one.
	theirs := folderOf(t, "subdash-0", 0o777)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	untrusted(t, CheckFolder(theirs, 0), "belongs to "+userName(65534)+", not to you (uid 0): another user made subdash's default folder")
}

// A symbolic link where the folder should be is refused, even to a good
// folder of the user's (its target can change under the socket), and so
// is a file; a folder that is not there is fs.ErrNotExist, for the dial
// to report as nothing serving.
func TestFolderThatIsNotAFolder(t *testing.T) {
	uid := os.Geteuid()
	good := folderOf(t, "good", 0o700)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	untrusted(t, CheckFolder(link, uid), link, "is not a folder (it is a symbolic link)")
	file := filepath.Join(good, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	untrusted(t, CheckFolder(file, uid), "is not a folder (it is a file)")
	if err := CheckFolder(filepath.Join(good, "missing"), uid); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing folder: %v, want fs.ErrNotExist", err)
	}
}

// listen listens on a socket named s.sock in dir; the listener is closed
// at the test's end.
func listen(t *testing.T, dir string) (string, *net.UnixListener) {
	t.Helper()
	path := filepath.Join(dir, "s.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return path, ln
}

// Dial connects to a socket of the user's in a private folder and names
// the process serving it; in a folder others may write in it refuses
// before connecting (the listener accepts nothing); a missing socket or
// folder is the dial's own error.
func TestDial(t *testing.T) {
	ctx := context.Background()
	path, ln := listen(t, folderOf(t, "ok", 0o700))
	c, p, err := Dial(ctx, path)
	if err != nil || p.PID != os.Getpid() || p.UID != os.Geteuid() {
		t.Fatalf("Dial of the user's socket: peer %+v, %v", p, err)
	}
	_ = c.Close()
	if a, err := ln.AcceptUnix(); err == nil {
		_ = a.Close()
	}

	open := folderOf(t, "open", 0o700)
	path, ln = listen(t, open)
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	_, _, err = Dial(ctx, path)
	untrusted(t, err, "chmod go-w "+open)
	if ue := (*UntrustedError)(nil); errors.As(err, &ue) && ue.Socket != path {
		t.Errorf("Socket = %q, want %q", ue.Socket, path)
	}
	_ = ln.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if a, err := ln.AcceptUnix(); err == nil {
		_ = a.Close()
		t.Error("a refused socket was connected to")
	}

	for _, missing := range []string{filepath.Join(t.TempDir(), "none.sock"), filepath.Join(t.TempDir(), "gone", "s.sock")} {
		if _, _, err := Dial(ctx, missing); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Dial of %s: %v, want fs.ErrNotExist", missing, err)
		}
	}
}

// A process of another user at the other end is refused, naming its pid
// and user and what to do; one whose credentials cannot be read too.
func TestCheckPeer(t *testing.T) {
	if err := CheckPeer("/d/s.sock", Peer{PID: 7, UID: 1000}, nil, 1000); err != nil {
		t.Errorf("the user's own process refused: %v", err)
	}
	err := CheckPeer("/d/s.sock", Peer{PID: 7, UID: 1001}, nil, 1000)
	untrusted(t, err, "control socket /d/s.sock is served by pid 7 of uid 1001", "not by you (uid 1000): it is not your subdash", "rm /d/s.sock")
	if ue := (*UntrustedError)(nil); errors.As(err, &ue) && (ue.Socket != "/d/s.sock" || ue.Folder != "/d") {
		t.Errorf("socket %q folder %q", ue.Socket, ue.Folder)
	}
	untrusted(t, CheckPeer("/d/s.sock", Peer{}, errors.New("EBADF"), 1000), "cannot tell who serves control socket /d/s.sock (EBADF)")
}

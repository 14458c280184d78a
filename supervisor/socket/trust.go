package socket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The rule of trust (SPEC §6), one for the host and every client: a
// control socket is used only when its folder is a real folder owned by
// the effective uid that no one else may write in (a writable folder lets
// another user put a socket of their own at the path, sticky or not), and
// the process at the other end of the connection runs as that uid
// (SO_PEERCRED). A client sends nothing before both hold.

// UntrustedError is a control socket the rule of trust refuses: its
// folder is not a private folder of the user, or another user's process
// serves it. Text says what is wrong, naming the folder and its owner or
// mode, or the socket and the process; Hint says what to do.
type UntrustedError struct {
	Socket string // the socket; "" when only its folder was looked at
	Folder string // the socket's folder
	Text   string
	Hint   string
}

// Error is Text, then what to do.
func (e *UntrustedError) Error() string { return e.Text + "; " + e.Hint }

// Peer is who is at the other end of a Unix socket connection, as the
// kernel reports it (SO_PEERCRED): for an accepted connection, the process
// that connected; for a dialled one, the process that listens.
type Peer struct {
	PID int
	UID int
}

// PeerOf returns the credentials of c's peer.
func PeerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, fmt.Errorf("reading peer credentials: %w", credErr)
	}
	return Peer{PID: int(cred.Pid), UID: int(cred.Uid)}, nil
}

// CheckFolder applies the rule of trust to dir, the folder of a control
// socket, for the user uid: nil when dir is a folder (not a symbolic link)
// owned by uid whose mode gives no write permission to group or others.
// Otherwise *UntrustedError naming the folder, its owner or its mode, and
// what to do; an error wrapping fs.ErrNotExist when there is no dir (no
// socket can be there either); or one naming dir for another failure of
// lstat(2).
func CheckFolder(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return &UntrustedError{Folder: dir, Text: fmt.Sprintf("cannot look at control socket folder %s (%v), so it is not known to be yours", dir, errors.Unwrap(err)),
			Hint: elsewhere(dir, uid)}
	}
	if !fi.IsDir() {
		what := "a file"
		if fi.Mode()&fs.ModeSymlink != 0 {
			what = "a symbolic link"
		}
		return &UntrustedError{Folder: dir, Text: fmt.Sprintf("control socket folder %s is not a folder (it is %s)", dir, what),
			Hint: "remove it or " + elsewhere(dir, uid)}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &UntrustedError{Folder: dir, Text: fmt.Sprintf("cannot tell who owns control socket folder %s", dir), Hint: elsewhere(dir, uid)}
	}
	if owner := int(st.Uid); owner != uid {
		e := &UntrustedError{Folder: dir,
			Text: fmt.Sprintf("control socket folder %s belongs to %s, not to you (uid %d), so a socket there may be theirs", dir, userName(owner), uid),
			Hint: "remove it or " + elsewhere(dir, uid)}
		if IsDefaultFolder(dir, uid) {
			e.Text = fmt.Sprintf("control socket folder %s belongs to %s, not to you (uid %d): another user made subdash's default folder, and a socket there would hand your tasks to them", dir, userName(owner), uid)
			e.Hint = fmt.Sprintf("have it removed (rm -r %s, as root or as its owner), or %s", dir, elsewhere(dir, uid))
		}
		return e
	}
	mode := st.Mode & 0o7777
	switch {
	case mode&0o022 != 0 && mode&unix.S_ISVTX != 0:
		return &UntrustedError{Folder: dir,
			Text: fmt.Sprintf("control socket folder %s is shared (mode %04o: sticky, like /tmp): other users can put a socket in it", dir, mode),
			Hint: elsewhere(dir, uid)}
	case mode&0o022 != 0:
		return &UntrustedError{Folder: dir,
			Text: fmt.Sprintf("control socket folder %s has mode %04o: %s can write in it, and so put a socket of their own there", dir, mode, writers(mode)),
			Hint: fmt.Sprintf("run chmod go-w %s, or remove it, or %s", dir, elsewhere(dir, uid))}
	}
	return nil
}

// Dial connects to the control socket at path under the rule of trust,
// for the effective uid: the folder is checked first (CheckFolder; a
// missing folder is left to the dial, which then fails as a missing
// socket does), then the process at the other end. It returns the
// connection and that process, or *UntrustedError (nothing was sent), or
// the dial's error (fs.ErrNotExist, syscall.ECONNREFUSED: nothing
// serves the path).
func Dial(ctx context.Context, path string) (*net.UnixConn, Peer, error) {
	return dial(ctx, path, os.Geteuid())
}

// dial is Dial for the user uid.
func dial(ctx context.Context, path string, uid int) (*net.UnixConn, Peer, error) {
	if err := CheckFolder(filepath.Dir(path), uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, Peer{}, withSocket(err, path)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, Peer{}, err
	}
	uc := c.(*net.UnixConn)
	p, err := PeerOf(uc)
	if err = CheckPeer(path, p, err, uid); err != nil {
		uc.Close() //nolint:errcheck // nothing was sent: the refusal is the error to report
		return nil, p, err
	}
	return uc, p, nil
}

// CheckPeer applies the rule of trust to p, the process serving the
// control socket at path (perr: why p could not be read), for the user
// uid: nil when p runs as uid, else *UntrustedError naming the process
// and its user.
func CheckPeer(path string, p Peer, perr error, uid int) error {
	if perr != nil {
		return &UntrustedError{Socket: path, Folder: filepath.Dir(path),
			Text: fmt.Sprintf("cannot tell who serves control socket %s (%v)", path, perr),
			Hint: elsewhere(filepath.Dir(path), uid)}
	}
	if p.UID == uid {
		return nil
	}
	return &UntrustedError{Socket: path, Folder: filepath.Dir(path),
		Text: fmt.Sprintf("control socket %s is served by pid %d of %s, not by you (uid %d): it is not your subdash", path, p.PID, userName(p.UID), uid),
		Hint: fmt.Sprintf("remove the socket (rm %s) or %s", path, elsewhere(filepath.Dir(path), uid))}
}

// withSocket names the socket in an *UntrustedError of its folder.
func withSocket(err error, path string) error {
	var ue *UntrustedError
	if errors.As(err, &ue) {
		ue.Socket = path
	}
	return err
}

// IsDefaultFolder reports whether dir is named as the folders Default
// gives uid are: "subdash-<uid>" (the one in /tmp) or "subdash" (the one
// in $XDG_RUNTIME_DIR, whatever that was when the host started). subdash
// creates these itself and keeps them mode 0700.
func IsDefaultFolder(dir string, uid int) bool {
	base := filepath.Base(dir)
	return base == "subdash" || base == fmt.Sprintf("subdash-%d", uid)
}

// elsewhere says how to use another folder: --socket, and for a default
// folder XDG_RUNTIME_DIR too.
func elsewhere(dir string, uid int) string {
	if IsDefaultFolder(dir, uid) {
		return "set XDG_RUNTIME_DIR to a private folder of yours, or pass --socket with a path in one"
	}
	return "pass --socket with a path in a private folder of yours"
}

// writers names who a folder's mode lets write besides its owner.
func writers(mode uint32) string {
	switch {
	case mode&0o020 != 0 && mode&0o002 != 0:
		return "its group and every other user"
	case mode&0o020 != 0:
		return "its group"
	}
	return "every other user"
}

// userName is "uid N (name)", or "uid N" when the system knows no name.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

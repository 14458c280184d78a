package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/socket"
)

// maxSocketPath is the longest path a Unix socket may have on Linux
// (sun_path holds 108 bytes including the terminating NUL).
const maxSocketPath = 107

// InUseError is returned by Listen when a live subdash already serves the
// control socket (SPEC §6: a second dashboard for the same directory refuses
// to start while the first is alive).
type InUseError struct {
	Socket string // the control socket path
	Dir    string // the working directory the socket is for
	PID    int    // process id of the subdash that holds it; 0 when unknown
	// NoAnswer is set when the holder accepted the probe's connection but
	// did not answer it (stopped or hung): it still holds the socket, which
	// is not stale, so it is not replaced (SPEC §6).
	NoAnswer *client.NoAnswerError
}

// Error names the socket and the process that holds it, and what to do.
func (e *InUseError) Error() string {
	if e.NoAnswer != nil {
		return fmt.Sprintf("%v; it still holds the socket, so this subdash does not replace it: resume or end it first, or pass another --socket", e.NoAnswer)
	}
	who := "another subdash"
	if e.PID > 0 {
		who = fmt.Sprintf("another subdash (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s is serving %s on %s; quit it first, drive it with `subdash ctl` or `subdash mcp`, or pass another --socket",
		who, e.Dir, e.Socket)
}

// listenUnix prepares the socket's folder, replaces a stale socket file,
// refuses a live one (*InUseError), and listens on path with mode 0600. The
// returned listener accepts only connections of the user uid.
func listenUnix(path, dir string, uid int) (*peerListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("control socket path %s is too long (%d bytes, at most %d); pass a shorter --socket",
			path, len(path), maxSocketPath)
	}
	if err := prepareFolder(filepath.Dir(path), uid); err != nil {
		return nil, err
	}
	// The lock makes "is it stale? then replace it" one step, so two
	// processes starting at once cannot both decide to take the socket. It
	// is taken on the socket's folder, so no lock file is left behind.
	unlock, err := lockFolder(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := clearStale(path, dir); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("cannot listen on control socket %s: %v; pass another --socket", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close() //nolint:errcheck // the failed chmod is the error to report
		return nil, fmt.Errorf("cannot restrict control socket %s to mode 0600: %v", path, err)
	}
	return &peerListener{UnixListener: ln, uid: uid}, nil
}

// prepareFolder creates the socket's folder with mode 0700, or checks an
// existing one by the rule of trust (socket.CheckFolder, SPEC §6): a real
// folder owned by uid that no one else may write in. A folder of subdash's
// own (one it creates, or a default one: socket.IsDefaultFolder) that is
// the user's is tightened to 0700 first; a folder chosen with --socket,
// such as a project folder, keeps its mode, and one that others may write
// in is refused with what to do.
func prepareFolder(dir string, uid int) error {
	_, statErr := os.Lstat(dir)
	created := errors.Is(statErr, fs.ErrNotExist)
	// Only the socket's own folder is created: a mistyped --socket must not
	// create a tree of folders.
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot create control socket folder %s: %s does not exist; pass a --socket in an existing folder",
				dir, filepath.Dir(dir))
		}
		return fmt.Errorf("cannot create control socket folder %s: %v; pass another --socket", dir, err)
	}
	if created || socket.IsDefaultFolder(dir, uid) {
		if err := tighten(dir, uid); err != nil {
			return err
		}
	}
	return socket.CheckFolder(dir, uid)
}

// tighten sets the mode of dir, a folder of subdash's own, to 0700 when
// it is a real folder of uid with another mode; anything else is left to
// the rule of trust to refuse (root could change another user's folder).
func tighten(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid || st.Mode&0o7777 == 0o700 {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("cannot restrict control socket folder %s to mode 0700: %v", dir, err)
	}
	return nil
}

// lockFolder takes an exclusive lock (flock(2)) on the folder dir and
// returns the function that releases it.
func lockFolder(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open control socket folder %s: %v", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close() //nolint:errcheck // a folder, opened to lock it: its Close cannot lose data
		return nil, fmt.Errorf("cannot lock control socket folder %s: %v", dir, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close() //nolint:errcheck // as above
	}, nil
}

// probeTimeout bounds clearStale's question to the holder of a live socket.
const probeTimeout = 2 * time.Second

// clearStale removes a socket file nobody listens on (connect(2) is
// refused): only that is stale. A socket whose connection is accepted gives
// *InUseError naming the listening process (SO_PEERCRED of a probe
// connection) and the folder it serves (its /v1/info), or, when it does not
// answer within probeTimeout (stopped, hung), saying so; a holder that is
// only stopped still holds the socket and is never replaced. A holder of
// another user gives *socket.UntrustedError (the rule of trust, SPEC §6);
// a file that is not a socket is refused. Neither is removed.
func clearStale(path, dir string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control socket %s: %v", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; remove it or pass another --socket", path)
	}
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	c, p, err := socket.Dial(dctx, path)
	cancel()
	var untrusted *socket.UntrustedError
	if errors.As(err, &untrusted) {
		return err
	}
	if err == nil {
		pid := p.PID
		c.Close() //nolint:errcheck // the probe connection sent nothing: its Close cannot lose data
		// Name the folder the other subdash serves, which is not
		// necessarily ours when --socket was given.
		in := &InUseError{Socket: path, Dir: dir, PID: pid}
		res, err := client.NewClient(path, dir).Probe(context.Background(), probeTimeout)
		if err == nil && res.Dir != "" {
			in.Dir = res.Dir
		}
		errors.As(err, &in.NoAnswer)
		return in
	}
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot tell whether control socket %s is in use: %v", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove stale control socket %s: %v", path, err)
	}
	return nil
}

// peerListener accepts only connections whose peer runs as uid (SPEC §6);
// any other connection is answered with 403 and closed.
type peerListener struct {
	*net.UnixListener
	uid     int
	refused func(socket.Peer, error) // called for each refused connection; may be nil
	host    *hostLock                // released when the listener closes; may be nil
	unlock  sync.Once
}

// Close closes the socket, then lets the host lock go; its error is either
// failure, or both.
func (l *peerListener) Close() error {
	err := l.UnixListener.Close()
	l.unlock.Do(func() { err = errors.Join(err, l.host.release()) })
	return err
}

// Accept returns the next connection of the owning user.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		p, perr := socket.PeerOf(c)
		err = checkPeer(p, perr, l.uid)
		if err == nil {
			return &peerConn{UnixConn: c, peer: p}, nil
		}
		if l.refused != nil {
			l.refused(p, err)
		}
		go refuse(c, err)
	}
}

// peerConn is an accepted connection with its peer's credentials, which
// the server puts in each request's context (see peerPID).
type peerConn struct {
	*net.UnixConn
	peer socket.Peer
}

type peerKey struct{}

// withPeer is the http.Server's ConnContext: it records the peer of c.
func withPeer(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*peerConn); ok {
		return context.WithValue(ctx, peerKey{}, pc.peer)
	}
	return ctx
}

// peerPID returns the pid of the process that sent the request, or 0.
func peerPID(ctx context.Context) int {
	p, _ := ctx.Value(peerKey{}).(socket.Peer)
	return p.PID
}

// refuse answers a connection of another user with an HTTP 403 whose body
// says why, then closes it. It first reads the peer's request (an answer
// before the request would be "unsolicited" to an HTTP client), within a
// deadline and a size limit, and passes nothing on.
func refuse(c *net.UnixConn, why error) {
	defer c.Close() //nolint:errcheck // a refused peer: nothing is left to tell it
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	br := bufio.NewReader(io.LimitReader(c, 1<<20))
	if req, err := http.ReadRequest(br); err == nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	body := wire.Marshal(wire.ErrorBody{Error: why.Error(), Code: wire.CodeForbidden})
	_, err := fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n%s: %d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		wire.ProtocolHeader, wire.Protocol, len(body), body)
	if err == nil {
		_ = c.CloseWrite()
	}
}

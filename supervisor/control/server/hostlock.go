package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// HostedElsewhereError is returned by Take when another subdash hosts the
// same working directory with the same state directory on another control
// socket (a different --socket or XDG_RUNTIME_DIR): two hosts would keep
// the directory's records at once, each showing the other's running agents
// as ended (SPEC §1: one host per directory; §10).
type HostedElsewhereError struct {
	Dir, StateDir string
	PID           int    // the other host
	Socket        string // the other host's control socket
}

// Error names the other host and how to reach it.
func (e *HostedElsewhereError) Error() string {
	return fmt.Sprintf("another subdash (pid %d) hosts %s with state directory %s on control socket %s (another --socket or XDG_RUNTIME_DIR than this one); attach to it with `subdash attach --socket %s`, or quit it first",
		e.PID, e.Dir, e.StateDir, e.Socket, e.Socket)
}

// hostLock is the lock a host holds on its working directory's records
// in the state directory while it runs: a file under stateDir/hosts named
// by the directory, locked with flock(2) (released by the kernel when the
// host dies, so it is never stale) and holding the host's pid and socket
// for the message of a refused start.
type hostLock struct {
	mu     sync.Mutex // guards f
	f      *os.File
	path   string
	socket string
	// stateDir and dir are for the message of a lock another host took.
	stateDir, dir string
}

type hostLockInfo struct {
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
}

// lockHost takes the host lock of dir in stateDir for a host on socket.
// A state directory that cannot be created or written is left for the
// supervisor to report (it says what to do); then nothing is locked.
func lockHost(stateDir, dir, socket string) (*hostLock, error) {
	if stateDir == "" {
		return nil, nil
	}
	l := &hostLock{path: hostLockPath(stateDir, dir), socket: socket, stateDir: stateDir, dir: dir}
	f, err := l.take()
	if f == nil {
		return nil, err
	}
	l.f = f
	return l, nil
}

// take opens and locks the lock file, and writes this host's pid and
// socket in it: the file, or nil and nil when it cannot be made, or nil
// and *HostedElsewhereError when another host holds it.
func (l *hostLock) take() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return nil, nil
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close() //nolint:errcheck // only read here (another host holds it): its Close cannot lose data
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		var other hostLockInfo
		_ = json.NewDecoder(f).Decode(&other)
		return nil, &HostedElsewhereError{Dir: l.dir, StateDir: l.stateDir, PID: other.PID, Socket: other.Socket}
	}
	b, _ := json.Marshal(hostLockInfo{PID: os.Getpid(), Socket: l.socket})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(b, 0)
	}
	return f, nil
}

// retake takes the lock again when its file is no longer at its path (the
// state directory was removed under the host, and with it the lock: a
// second host could start on the same folder; SPEC §10). nil when the
// file is still the one locked or the lock was taken again; else what
// failed, in words: another host took the lock meanwhile (both now keep
// the directory's records), or the file cannot be made.
func (l *hostLock) retake() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	if at, err := os.Stat(l.path); err == nil {
		if mine, err := l.f.Stat(); err == nil && os.SameFile(at, mine) {
			return nil
		}
	}
	f, err := l.take()
	var other *HostedElsewhereError
	switch {
	case errors.As(err, &other):
		return fmt.Errorf("cannot take the host lock %s again: another subdash (pid %d, control socket %s) took it while the state directory was gone, and both now keep the records of %s; quit one of them", l.path, other.PID, other.Socket, l.dir)
	case f == nil:
		return fmt.Errorf("cannot take the host lock %s again: it cannot be made; a second subdash may start on this directory", l.path)
	}
	_ = l.f.Close() // its file is gone: closing it lets go of nothing another host sees
	l.f = f
	return nil
}

// hostLockPath is the file of dir's host lock in stateDir:
// stateDir/hosts/<first 12 hex digits of sha256(dir)>.lock.
func hostLockPath(stateDir, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(stateDir, "hosts", hex.EncodeToString(sum[:6])+".lock")
}

// lockedSocket returns the socket the last host that took dir's lock in
// stateDir said it serves; "" when there is no lock file or it names no
// socket. The lock itself is not tried (a host starting meanwhile would
// find it taken): whether a host serves the socket, only asking it tells.
func lockedSocket(stateDir, dir string) string {
	b, err := os.ReadFile(hostLockPath(stateDir, dir))
	if err != nil {
		return ""
	}
	var info hostLockInfo
	if json.Unmarshal(b, &info) != nil {
		return ""
	}
	return info.Socket
}

// release lets the lock go; nil is a lock not taken. Its error is the
// failed Close of the lock file, which this host wrote.
func (l *hostLock) release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot release the host lock %s: %v", l.path, err)
	}
	return nil
}

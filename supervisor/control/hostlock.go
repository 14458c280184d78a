package control

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
type hostLock struct{ f *os.File }

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
	path := hostLockPath(stateDir, dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
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
		return nil, &HostedElsewhereError{Dir: dir, StateDir: stateDir, PID: other.PID, Socket: other.Socket}
	}
	b, _ := json.Marshal(hostLockInfo{PID: os.Getpid(), Socket: socket})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(b, 0)
	}
	return &hostLock{f: f}, nil
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
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("cannot release the host lock %s: %v", l.f.Name(), err)
	}
	return nil
}

package control

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peer is who is at the other end of a Unix socket connection, as the
// kernel reports it (SO_PEERCRED): for an accepted connection, the process
// that connected; for a dialled one, the process that listens.
type peer struct {
	PID int
	UID int
}

// peerOf returns the credentials of c's peer.
func peerOf(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return peer{}, err
	}
	if credErr != nil {
		return peer{}, fmt.Errorf("reading peer credentials: %w", credErr)
	}
	return peer{PID: int(cred.Pid), UID: int(cred.Uid)}, nil
}

// checkPeer says whether a peer may use a control socket owned by uid: only
// processes of the same user may (SPEC §6). The error is what the refused
// client is told.
func checkPeer(p peer, err error, uid int) error {
	if err != nil {
		return fmt.Errorf("connection refused: cannot tell which user connected (%v)", err)
	}
	if p.UID != uid {
		return fmt.Errorf("connection refused: this subdash control socket belongs to uid %d; uid %d may not use it", uid, p.UID)
	}
	return nil
}

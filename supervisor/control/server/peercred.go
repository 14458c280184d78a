package server

import (
	"fmt"

	"github.com/subdash/subdash/supervisor/socket"
)

// checkPeer says whether a peer may use a control socket owned by uid: only
// processes of the same user may (SPEC §6). The error is what the refused
// client is told.
func checkPeer(p socket.Peer, err error, uid int) error {
	if err != nil {
		return fmt.Errorf("connection refused: cannot tell which user connected (%v)", err)
	}
	if p.UID != uid {
		return fmt.Errorf("connection refused: this subdash control socket belongs to uid %d; uid %d may not use it", uid, p.UID)
	}
	return nil
}

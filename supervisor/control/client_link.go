package control

import (
	"context"
	"net"
)

// NewClientVia returns a client of a host that this machine reaches
// through dial rather than at a socket of its own: a host on another
// machine, over an ssh link (package sshlink, SPEC §9). name is what its
// messages call the host (ssh://buildbox/src/app) where a local client
// names its socket. The peer of such a connection is the carrier (ssh),
// not the host, so the client takes no pid from it (PID stays 0 and no
// message names a local process): what the host says of itself (Info)
// names its pid there. dial's errors reach the caller as they are,
// wrapped in "cannot reach subdash at NAME".
func NewClientVia(name string, dial func(ctx context.Context) (net.Conn, error)) *Client {
	return (&Client{socket: name}).dialing(dial)
}

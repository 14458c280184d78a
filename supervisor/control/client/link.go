package client

import (
	"context"
	"net"

	"github.com/subdash/subdash/supervisor/proto"
)

// NewClientVia returns a client of a host that this machine reaches
// through dial rather than at a socket of its own: a host on another
// machine, over an ssh link (package sshlink, SPEC §9). name is what its
// messages call the host (ssh://buildbox/src/app) where a local client
// names its socket. The peer of such a connection is the carrier (ssh),
// not the host, so the client takes no pid from it (PID stays 0 and no
// message names a local process): what the host says of itself (Info,
// or WithHostInfo before the first call) names its pid there in
// *NoAnswerError and *StoppedError. dial's errors reach the caller as
// they are, wrapped in "cannot reach subdash at NAME".
func NewClientVia(name string, dial func(ctx context.Context) (net.Conn, error)) *Client {
	return (&Client{socket: name, via: true}).dialing(dial)
}

// WithHostInfo returns c knowing what its host said of itself before c
// made a call (sshlink.Link.Info: the bridge's answer there), so that an
// error of c's first call names the host's pid there rather than "the
// process serving ssh://…". A later Info replaces it. Call it before use.
func (c *Client) WithHostInfo(info proto.Info) *Client {
	if info.PID > 0 {
		c.host.Store(&info)
	}
	return c
}

// hostPID is the pid that names the host in errors: the peer of the last
// connection (SO_PEERCRED) for a local client, else what the host said of
// itself (its pid there, for a client over a link); 0 when unknown.
func (c *Client) hostPID() int {
	if p := c.PID(); p > 0 {
		return p
	}
	if h := c.host.Load(); h != nil {
		return h.PID
	}
	return 0
}

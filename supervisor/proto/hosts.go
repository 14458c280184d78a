package proto

import (
	"context"
	"time"
)

// Several hosts in one dashboard (SPEC §9 "Several hosts"): a viewer's
// backend attached to several hosts tags each agent with its host
// (AgentInfo.Host), says how each host is (HostSet, Change.Hosts), and
// sends each operation to its agent's host; one that names no agent
// (spawn) goes to the host WithHost names.

// HostState is one host of a dashboard of several hosts as its viewer
// sees it now. It holds copies.
type HostState struct {
	// Name names the host on its row and where a path would be ambiguous
	// (HOST:/root/x): its [[hosts]] name, else its folder's last element;
	// unique among the hosts.
	Name string
	// Target is the target the host was given by: a folder, a socket or
	// an ssh:// target (SPEC §9).
	Target string
	// Dir is the host's working directory; Where its machine, the ssh
	// target's host ("" for this one).
	Dir, Where string
	// PID is the host's process id (on its machine), Kind how it runs
	// ("dashboard", "serve", "mcp"); 0 and "" before it first answered.
	PID  int
	Kind string
	// Socket is the host's control socket (on its machine).
	Socket string
	// ReadOnly: the viewer refuses every operation on this host (SPEC §9
	// --read-only, or a target's ?read-only).
	ReadOnly bool
	// MaxAgents and Command are the host's --max-agents and agent command
	// as the status line shows them; 0 and "" before it first answered.
	MaxAgents int
	Command   string
	// Lost says why the host cannot be reached ("" while it answers):
	// stopped, killed, not answering, a link that dropped. Its agents stay
	// as last seen. LostAt is when it was lost.
	Lost   string
	LostAt time.Time
}

// HostSet is a viewer's backend of several hosts (SPEC §9): the hosts it
// shows, in the order they were given. Hosts answers from memory; the
// changes of a host's state come as Change.Hosts.
type HostSet interface {
	Hosts() []HostState
}

// hostKey is the context key of WithHost.
type hostKey struct{}

// WithHost returns ctx naming the host (HostState.Name) an operation that
// names no agent goes to: a spawn, where a dashboard of several hosts
// spawns it.
func WithHost(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, hostKey{}, host)
}

// HostOf returns the host WithHost put in ctx, "" when none.
func HostOf(ctx context.Context) string {
	h, _ := ctx.Value(hostKey{}).(string)
	return h
}

package server

import (
	"context"
	"io"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// Engine is what the server needs of the engine to serve its routes
// (wire.Routes): *supervisor.Supervisor implements it, and a test serves
// a fake. It is declared here, by its one user, so that the engine knows
// nothing of its server; the roles of package proto hold what a
// front-end asks too.
type Engine interface {
	// The host, as GET /v1/info and /v1/config say it: its settings, this
	// run's folder, the agents restored at its start, what it failed to
	// do, its spending and its logs (proto.Reader's Storage). Stopped is
	// closed once it shut down: every agent is final.
	Config() supervisor.Config
	RunDir() string
	Restored() int
	Failure() string
	Spend() proto.Spend
	Stopped() <-chan struct{}
	// WhenStateRemade has fn called once the host made its state
	// directory again after it was removed under it (the host lock is
	// taken again there; SPEC §10).
	WhenStateRemade(fn func() error)

	// The event stream: every agent's snapshot, the changes since, and
	// the output counts of one submission (its output counts and the
	// number of submissions; an unknown agent or submission is the error).
	Agents() []proto.AgentInfo
	Subscribe() *proto.Subscription
	Counts(id string, seq int) (proto.OutputCounts, int, error)

	// Who calls: the nesting check of a process (SPEC §6) and the agent
	// whose running submission holds it ("" for none, SPEC §14).
	CheckNesting(pid int) error
	CallerAgent(pid int) string

	// The messages of spawn and send, read from a request's text body
	// into a file of the run (ReadMessage) or made of a JSON string
	// (supervisor.NewMessage), never whole in memory when long.
	ReadMessage(r io.Reader) (*supervisor.Message, error)
	SpawnMessage(ctx context.Context, m *supervisor.Message, taskName string) (proto.SpawnResult, error)
	SendMessage(ctx context.Context, id string, m *supervisor.Message, interrupt bool) (proto.SendResult, error)
	QueueMessage(ctx context.Context, id string, m *supervisor.Message) (proto.SendResult, error)
	SteerMessage(ctx context.Context, id string, m *supervisor.Message) (proto.SendResult, error)
	Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error)
	WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error

	// The operations on agents (proto.Operator's, but those above that
	// take a message).
	Interrupt(ctx context.Context, id string) (proto.StatusResult, error)
	Close(ctx context.Context, id string) (proto.StatusResult, error)
	CloseMany(ctx context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error)
	Resume(ctx context.Context, id string) (proto.StatusResult, error)
	Forget(ctx context.Context, id string) (proto.StatusResult, error)
	MarkSeen(ctx context.Context, id string) (proto.StatusResult, error)
	CancelQueue(ctx context.Context, id string) (proto.StatusResult, error)
	Approve(ctx context.Context, id, requestID string, always bool) (proto.ApprovalResult, error)
	Answer(ctx context.Context, id, requestID string, answers map[string][]string) (proto.QuestionResult, error)
	Deny(ctx context.Context, id, requestID, message string) (proto.ApprovalResult, error)

	// The reads: a viewer's windows, logs raw with their gaps (SPEC §5),
	// and the roles a front-end reads by.
	WriteRawLog(ctx context.Context, w io.Writer, id string, seq int, gaps func([]proto.LogGap)) error
	proto.Reader
	proto.Waiter
	proto.Lister
	proto.Searcher
	proto.Differ
	proto.MultiAgent
}

var _ Engine = (*supervisor.Supervisor)(nil)

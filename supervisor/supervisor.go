package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/subdash/subdash/supervisor/appserver"
	"github.com/subdash/subdash/supervisor/internal/budget"
	"github.com/subdash/subdash/supervisor/internal/changes"
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/mailbox"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/internal/stall"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/runner/local"
	"github.com/subdash/subdash/supervisor/transcript"
)

// The local runner is always there (SPEC §4); the Kubernetes runner
// registers itself in binaries built with -tags kube.
func init() { runner.Register(runner.Local, local.Factory) }

// defaultResident is how many finished submissions keep their display
// lines in memory, across all agents; the one that finished (or was read
// back) longest ago is released first, and Window and Transcript read it
// back from its log file when asked. Memory then stays bounded however
// many agents run and however often (SPEC §5).
const defaultResident = 16

// Supervisor runs agents and their submissions. All methods are safe for
// concurrent use. Create it with New and end it with Shutdown.
//
// It implements the roles of package proto (Viewer, Reader, Operator,
// Waiter, Lister) for the front-ends of its own process. ctx carries who
// asks (proto.OriginOf) and bounds Wait; the other operations finish once
// started, since a stop asked for is carried out whole (SPEC §4): they
// return as soon as the supervisor is done, which for Interrupt and Close
// is when the process group is gone.
type Supervisor struct {
	cfg     Config
	runID   string
	runDir  string
	journal *journal.Writer
	hub     proto.Feed
	runs    sync.WaitGroup // one per running submission
	budget  *output.Budget // bounds the CPU spent processing output
	space   *output.Space  // the free-space floor of the log files (SPEC §5)

	mu     sync.Mutex // guards the fields below and every agent's and submission's mutable state
	agents map[string]*agent
	order  []*agent          // oldest first
	paths  map[string]*agent // every agent by its path (SPEC §14)
	// mailboxSeq numbers the items of every mailbox (mailbox.Item.Seq),
	// on from the highest a restored record holds.
	mailboxSeq atomic.Uint64
	// waiting counts the Wait calls in flight (Waiting).
	waiting atomic.Int64
	// roots are the root mailboxes of the multi-agent MCP sessions, by
	// session; mailboxWake is closed (and replaced) when any mailbox
	// changes.
	roots       map[string]*mailbox.Box
	mailboxWake chan struct{}
	// lineMem is the display-line memory budget of every scrollback
	// (SPEC §5), with the finished submissions' outputs that hold lines.
	lineMem  *output.Memory
	shutdown bool
	restored int           // agents restored from earlier runs at start (SPEC §10)
	storage  storageCache  // where the logs are and their size (retention.go)
	stopped  chan struct{} // closed once Shutdown has ended every submission
	stopOnce sync.Once
	cut      chan struct{} // closed by SkipGrace: grace periods end now
	cutOnce  sync.Once
	// attentionSeq numbers the transitions to needing you (Attention.Seq).
	attentionSeq uint64
	// warnings are problems found while running (a failing
	// --notify-command), added to Config().Warnings.
	warnings []string
	notifier *notifier        // runs --notify-command; nil without one
	changes  *changes.Tracker // snapshots of work trees (SPEC §15); nil with --track-changes=false
	// spent is the cost of the submissions that ended on this host, its
	// forgotten agents' included (SPEC §11 "Budgets").
	spent float64
	// The state directory kept (statedir.go): the agents forgotten in
	// this run, for a checkpoint; what to do once the state directory was
	// made again; whether it is gone and not made again yet; the timer
	// that looks.
	forgotten   []string
	remade      []func() error
	stateGone   bool
	logRechecks int
	stateTimer  *time.Timer
}

// The roles of package proto the supervisor plays for the front-ends of
// its process.
var _ interface {
	proto.Viewer
	proto.Reader
	proto.Operator
	proto.Waiter
	proto.Lister
	proto.MultiAgent
} = (*Supervisor)(nil)

// agent is one supervised subagent (SPEC §1).
type agent struct {
	id        string
	createdAt time.Time
	opMu      sync.Mutex // serializes operations that wait on this agent's processes

	// Guarded by Supervisor.mu.
	status      proto.Status
	beforeClose proto.Status // status to restore on resume
	updatedAt   time.Time
	lastMessage string
	lastOutput  *string
	lastError   *string
	endNow      string // how its latest submission ended, in one line (endText)
	subs        []*submission
	running     *submission        // the submission whose process group may be alive
	replacing   bool               // a send with interrupt is between two submissions
	sessionID   string             // agent CLI session or thread id (SPEC §8)
	usage       proto.Usage        // tokens and cost of its ended submissions (presets)
	runCost     float64            // the cost of those that ran on this host
	inner       []proto.InnerAgent // inner agents of its ended submissions, oldest first (SPEC §8)

	// Set at spawn (or restore) and never changed: how every submission of
	// this agent runs, whatever the flags of a later host (SPEC §10).
	command string  // the agent command, when preset is nil
	builtin bool    // command is the built-in agent of the host binary (SourceBuiltin)
	preset  *Preset // the preset, or nil
	runner  string  // where submissions run: "local"
	// home is the agent's own Memo home (MEMO_HOME) for the memo preset on
	// the local runner, "" otherwise (SPEC §8).
	home     string
	restored bool   // the record comes from an earlier run (SPEC §10)
	origin   string // who spawned it: "mcp", "ctl", "viewer", "" (this process's dashboard)
	// alwaysAllowed are the tools allowed for the rest of the agent's
	// session by an "allow always" answer (SPEC §12).
	alwaysAllowed map[string]bool
	needsYou      *proto.Attention // why it needs the user, nil when it does not (SPEC §11)
	// mailbox holds the messages held or queued for its next submission,
	// the ends of its children, and the items a wait of its own
	// submission handed over and no wait acknowledged yet (SPEC §11, §14;
	// queue.go, mailbox.go).
	mailbox mailbox.Box
	// pending: a follow-up waits for a slot of the concurrency limit to
	// start its next submission (pending_init, SPEC §14).
	pending bool
	// Its place in the tree (SPEC §14), set at spawn: task name ("" when
	// none was given), path, the parent's id ("" under the root), and the
	// MCP session whose root mailbox gets the ends of a child of the root.
	taskName, path, parentID, session string
	// closedBy is the agent whose close closed this one too (a close
	// cascades to the descendants); resume of that agent reopens it.
	closedBy string
	// finals counts the final statuses the agent took; lastFinal is what
	// Wait reports for the latest one, so that a wait in flight returns it
	// even when a queued message started the next submission at once.
	finals    int
	lastFinal *proto.WaitDetail
	place     runner.Place // where its latest submission runs (SPEC §13)
	// ending is set while a submission's end is being written to the
	// journal: Wait does not answer with that status until it is there, so
	// a host killed right after a wait answered restores what the caller
	// was told (SPEC §10).
	ending bool
}

// submission is one run of the agent command for one message (SPEC §1).
type submission struct {
	id      string
	seq     int
	message string
	command string
	// folder is the agent's folder in the run that made it: its log file
	// is <folder>/<seq>-<id>.log (journal.LogPath) and its message file
	// beside it, .msg; made when asked, not held (a restored host holds
	// tens of thousands of submissions). "" for a record of an older
	// subdash whose paths are not so: files holds them.
	folder    string
	files     *subFiles
	startedAt time.Time
	out       *output.Output // set at creation; its log file is attached by launch
	stopCh    chan struct{}  // closed by the first stop request
	done      chan struct{}  // closed once the submission has ended and the agent is updated
	tr        *transcriptState
	// appr relays tool permission requests (--approvals, SPEC §12); nil
	// otherwise.
	appr *approvals
	// steer: what it takes while it runs (SPEC §11); nil unless its agent
	// takes messages while it runs.
	steer *steering
	// codex speaks to the app-server of a codex submission (codex.go); nil
	// for any other.
	codex *appserver.Driver
	// memo is the run's Memo home and the session files it held at start
	// (memo preset, local runner; set by launch); nil otherwise.
	memo *memoRun
	// clock counts its signs of life for the stall rule (SPEC §11).
	clock *stall.Clock

	// Guarded by Supervisor.mu.
	proc      *proc  // set by launch once the process started
	reason    string // why we stopped it: "interrupted", "timed out after …"; "" if not stopped
	endedAt   time.Time
	status    proto.Status
	exitCode  *int
	signal    string
	lastError *string
	// interrupted: its agent CLI was sent its own interrupt at the stop
	// (SPEC §4), so run gives it the grace period to end by it.
	interrupted bool

	// Records (SPEC §10). message above is the message's head
	// (messageHead); the whole message is in the file msgPath().
	msgLen int // the whole message's length in bytes
	// logDropped is the bytes its log files miss, as its record says
	// (restored; a live one's output counts them, LogDropped).
	logDropped int64
	// pending is the whole message until launch keeps it in msgPath();
	// then only the file keeps it.
	pending *Message
	chg     *subChanges // what it changed in its work tree (changes.go); guarded by Supervisor.mu
	// took are the mailbox items its message took (SPEC §14), journaled
	// with the event that starts it; nil for none. A pointer: most take
	// none, and a restored host holds tens of thousands of submissions.
	took *[]uint64
	// byParent: the stop of this submission was asked by its agent's
	// parent, whose mailbox therefore gets no item of it (SPEC §14).
	byParent bool
	// The flags are together: a restored host holds tens of thousands of
	// submissions.
	restored bool // from an earlier run: out is made on demand, evicted
	// newSession is set when an earlier submission ended before the agent
	// CLI created a session, so this one starts a new conversation (SPEC §8).
	newSession bool
	exited     bool // guarded by Supervisor.mu: the main process ended by itself: a stop request no longer changes the outcome
}

// New creates a supervisor for cfg (see Resolve): it creates the run's
// folder <StateDir>/runs/<run-id>/ (mode 0700) and its journal. It fails when
// the state directory cannot be written.
func New(cfg Config) (*Supervisor, error) {
	if cfg.MaxAgents < 1 {
		cfg.MaxAgents = DefaultMaxAgents
	}
	if cfg.MaxDepth < 1 {
		cfg.MaxDepth = proto.DefaultMaxDepth
	}
	if cfg.Scrollback < 1 {
		cfg.Scrollback = DefaultScrollback
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Dir == "" {
		cfg.Dir, _ = os.Getwd()
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ()
	}
	runID := newRunID()
	if cfg.RunnerName == "" {
		cfg.RunnerName = runner.Local
	}
	if cfg.Runner == nil {
		f, ok := runner.Lookup(cfg.RunnerName)
		if !ok {
			return nil, fmt.Errorf("no runner %q in this binary", cfg.RunnerName)
		}
		r, err := f(runner.Settings{Environ: cfg.Environ, Grace: cfg.Grace, Kube: cfg.Kube,
			Host: runner.Host{RunID: runID, PID: os.Getpid()}})
		if err != nil {
			return nil, err
		}
		cfg.Runner = r
	}
	runDir, j, err := openRun(&cfg, runID)
	if err != nil {
		_ = cfg.Runner.Close(context.Background()) // what it made (the local runner's cgroup) goes; the error said is openRun's
		return nil, err
	}
	s := &Supervisor{cfg: cfg, runID: runID, runDir: runDir, journal: j, agents: map[string]*agent{}, paths: map[string]*agent{},
		roots: map[string]*mailbox.Box{}, mailboxWake: make(chan struct{}),
		budget: output.NewBudget(), lineMem: output.NewMemory(cfg.LineMemory, defaultResident),
		stopped: make(chan struct{}), cut: make(chan struct{}), changes: trackerOf(cfg, runDir)}
	// Changes carry the agent's snapshot, taken when a subscriber drains
	// them (proto.Change.Info): the dashboard and the event stream need
	// not ask for every agent's.
	s.hub.Payload = func(c *proto.Change) {
		if info, ok := s.Agent(c.AgentID); ok {
			c.Info = &info
		}
	}
	s.space = output.NewSpace(cfg.StateDir, cfg.Statfs, s.spaceChanged)
	j.Write(journal.Event{Event: "run_started", Command: cfg.Command, PID: os.Getpid(), Note: "dir " + cfg.Dir, Dir: cfg.Dir})
	// The earlier runs, read once for the restore, the retention and the
	// orphan sweep. Restore begins now: its checkpoint holds every event
	// written before.
	asOf := time.Now()
	runs := journal.ListRuns(cfg.StateDir, runDir)
	s.restore(runs, asOf)
	s.removeOldRuns(runs, asOf)
	if strings.TrimSpace(cfg.NotifyCommand) != "" {
		s.notifier = newNotifier(s)
	}
	if cfg.StallAfter > 0 {
		go s.watchStalls()
	}
	if note := s.reapOrphans(runs); note != "" {
		s.cfg.Notes = append(s.cfg.Notes, note)
	}
	if note := cfg.Runner.Sweep(runDir); note != "" {
		s.cfg.Notes = append(s.cfg.Notes, note)
	}
	// A journal that cannot be written is said on every screen and to
	// programs (SPEC §5), also before any agent exists to show it.
	if f := j.Watch(s.warn); f != "" {
		s.warnings = append(s.warnings, f)
	}
	s.giveBack()
	s.watchState()
	return s, nil
}

// Failure says in words, with the path, what this host failed to do that
// belongs to no one agent: its journal could not be written, or its state
// directory was removed and is not made again yet (SPEC §5); "" when
// nothing failed. Every agent's Summary.Failure says it too.
func (s *Supervisor) Failure() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hostFailureLocked()
}

// hostFailureLocked is Failure. Call with s.mu held.
func (s *Supervisor) hostFailureLocked() string {
	f := s.journal.Failure()
	if s.stateGone {
		gone := "the state directory " + s.cfg.StateDir + " was removed under this host; its journal " + s.journalPath() + " is not written again yet"
		f = strings.TrimPrefix(f+"; "+gone, "; ")
	}
	return f
}

func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Config returns the supervisor's configuration. Its Warnings include the
// problems found since it started (a failing --notify-command); the caller
// owns the slices.
func (s *Supervisor) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	c.Warnings = append(append([]string(nil), s.cfg.Warnings...), s.warnings...)
	return c
}

// HostConfig returns what a dashboard shows of this host's settings
// (proto.Viewer): the agent command as shown, the limit, the preset, the
// warnings (with those found since it started) and notes, and the
// features of this build.
func (s *Supervisor) HostConfig() proto.HostConfig {
	c := s.Config()
	h := proto.HostConfig{Command: c.Shown(), MaxAgents: c.MaxAgents, Dir: c.Dir,
		Warnings: c.Warnings, Notes: append([]string(nil), c.Notes...), Features: append(proto.Protocol2Features(), proto.HostFeatures()...),
		MaxBudgetUSD: c.Budget.Agent, FleetBudgetUSD: c.Budget.Fleet}
	if p := c.Preset; p != nil {
		h.PresetName, h.PresetArgs, h.PresetFormat, h.Approvals = p.Name, p.Args, p.Format, p.Approvals
	}
	return h
}

// RunDir returns the absolute folder of this run's logs and journal.
func (s *Supervisor) RunDir() string { return s.runDir }

// Subscribe returns a subscription to changes of every agent.
func (s *Supervisor) Subscribe() *proto.Subscription { return s.hub.Subscribe() }

// SubscribeSummaries returns a subscription to changes of agents'
// summaries, forgets and warnings, without output alone and without
// snapshots (proto.Feed.SubscribeSummaries): a follower of statuses (the
// MCP server's progress of a wait) reads the agents it needs with Agent.
func (s *Supervisor) SubscribeSummaries() *proto.Subscription { return s.hub.SubscribeSummaries() }

// runningCount counts agents that hold a slot of the concurrency limit.
// Call with s.mu held.
func (s *Supervisor) runningCount() int {
	n := 0
	for _, a := range s.order {
		if a.running != nil || a.replacing {
			n++
		}
	}
	return n
}

func (s *Supervisor) summaryLocked(a *agent) proto.Summary {
	last := ""
	if n := len(a.subs); n > 0 {
		last = a.subs[n-1].id
	}
	sum := proto.Summary{
		AgentID:          a.id,
		Status:           a.status,
		CreatedAt:        proto.Time{Time: a.createdAt},
		UpdatedAt:        proto.Time{Time: a.updatedAt},
		LastMessage:      a.lastMessage,
		LastSubmissionID: last,
		HasLastOutput:    a.lastOutput != nil && *a.lastOutput != "",
		HasLastError:     a.lastError != nil,
		SessionID:        a.sessionID,
		Restored:         a.restored,
		PendingApprovals: pendingLocked(a),
		PendingQuestions: questionsLocked(a),
		NeedsYou:         copyAttention(a.needsYou),
		AgentPath:        a.path,
		TaskName:         a.taskName,
		ParentID:         a.parentID,
		QueuedMessages:   a.mailbox.Messages(),
		PendingStart:     a.pending,
		SteeredMessages:  steeredLocked(a),
		Steerable:        steerable(a),
		Pod:              a.place.Pod,
		Node:             a.place.Node,
		Failure:          s.failureLocked(a),
		LogDropped:       logDroppedLocked(a),
		InnerAgents:      innerLocked(a),
		BudgetReached:    s.agentBudgetLocked(a),
		Changes:          s.latestChangesLocked(a),
		StalledSince:     stalledLocked(a),
		OutputRate:       rateLocked(a),
	}
	sum.Usage, sum.RunCostUSD = usageLocked(a)
	sum.Now = s.nowLocked(a, sum.PendingApprovals, sum.PendingQuestions)
	if len(sum.QueuedMessages) > 0 {
		sum.QueuedMessage = sum.QueuedMessages[0]
	}
	return sum
}

// newSubmissionLocked records a new running submission of a, whose message
// is the items of a's mailbox, then own (nil for none; SPEC §14). Errors:
// the joined message is too long (nothing changed). Call with s.mu held;
// then call launch without it.
func (s *Supervisor) newSubmissionLocked(a *agent, own *Message) (*submission, error) {
	if err := s.checkBudgetLocked(a); err != nil {
		return nil, err
	}
	m, took, err := takeMailboxLocked(a, own)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	seq := 1
	if n := len(a.subs); n > 0 {
		seq = a.subs[n-1].seq + 1
	}
	head := m.head
	sub := &submission{
		id:        uuid.NewString(),
		seq:       seq,
		message:   head,
		msgLen:    m.size,
		pending:   m,
		startedAt: now,
		stopCh:    make(chan struct{}),
		done:      make(chan struct{}),
		status:    proto.StatusRunning,
		clock:     stall.NewClock(now),
	}
	if len(took) > 0 {
		sub.took = &took
	}
	sub.folder = filepath.Join(s.runDir, a.id)
	sub.command = a.command
	if p := a.preset; p != nil {
		sub.command, _ = p.CommandFor(a.id, a.sessionID)
		if p.Name == "claude" { // claude counts each process from $0: what is left (SPEC §11)
			sub.command += budget.ClaudeArgs(a.usage.CostUSD, s.cfg.Budget.Agent)
		}
		// memo: launch decides, seeing the agent's Memo home (prepareMemo)
		sub.newSession = p.Structured() && !p.isMemo() && a.sessionID == "" && len(a.subs) > 0
	}
	opt := output.Options{MaxLines: s.cfg.Scrollback, Memory: s.lineMem, Budget: s.budget,
		Notify: func() {
			if sub.clock.Touch() {
				s.unstall(a, sub)
			}
			s.hub.Publish(proto.Change{AgentID: a.id, Output: true})
		},
		// the failure is in the agent's summary (failure): every viewer
		// and client learns of it at once, not when the submission ends
		LogFailed: func() { s.hub.Publish(proto.Change{AgentID: a.id, Agent: true}) },
		// the cap began dropping, logging paused or resumed: log_dropped
		LogChanged: func() { s.hub.Publish(proto.Change{AgentID: a.id, Agent: true}) },
		MaxLogSize: s.cfg.MaxLogSize, Space: s.space,
		// what the output says in the raw view, the transcript says too
		Noted: func(text string) {
			if sub.tr != nil {
				sub.tr.add(transcript.Entry{Kind: transcript.KindNote, Text: text})
			}
		}}
	if a.preset.Structured() {
		sub.tr = newTranscriptState(a.preset, func(id string) { s.onSession(a, sub, id) })
		opt.RawLine = sub.tr.line
	}
	s.steerSetupLocked(a, sub, &opt)
	sub.out = output.New(opt)
	if a.preset.Structured() && (a.preset.Approvals || a.preset.Name == "claude") && sub.appr == nil {
		s.newApprovalsLocked(a, sub)
	}
	a.subs = append(a.subs, sub)
	a.restored = false // an agent of this run now
	a.running = sub
	a.pending = false // it took the mailbox: no follow-up waits for a slot
	a.needsYou = nil  // busy again: what it needed you for is past
	s.runs.Add(1)     // done by run, or by launch when the process cannot start
	a.status = proto.StatusRunning
	a.lastMessage = head
	a.updatedAt = now
	return sub, nil
}

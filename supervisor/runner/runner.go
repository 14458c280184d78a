package runner

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Runner starts submissions where they run and ends them (SPEC §13): the
// local runner (package runner/local) runs them as process groups on this
// machine (SPEC §4), the Kubernetes runner (package runner/kube) in pods.
// The supervisor's operations, lifecycle, output pipeline and records are
// the same for every runner and never ask which one they have.
type Runner interface {
	// Start starts req.Command for one submission: req.Stdin is given its
	// stdin in a goroutine of its own (it writes the message and a newline,
	// then closes it: SPEC §4); every byte of its
	// stdout and stderr goes to req.Output as it arrives. Start returns
	// quickly: a runner whose submissions need time to start (a pod being
	// scheduled) returns a Process at once and reports a failure to start
	// through Process.Exit().Err. An error means the submission cannot
	// start at all; its text is the submission's last_error (SPEC §4).
	Start(req StartRequest) (Process, error)
	// Sweep ends what hosts that are gone left running with this runner
	// (SPEC §13: pods of a host that is gone), in the background, and
	// returns a note for the dashboard, or "" when there was nothing.
	// runDir is this host's run folder. Process groups left on this
	// machine are the orphan sweep's (local.Orphans), which the engine
	// runs whatever the runner.
	Sweep(runDir string) string
	// Close ends what the runner holds once every submission has ended
	// (the Kubernetes runner deletes its pods), and returns when that is
	// done or ctx ends. Shutdown also calls it when its time ran out with
	// submissions still running: it then ends them with what it holds.
	Close(ctx context.Context) error
}

// CPUMeter is a Runner that can tell the CPU time its submissions' process
// groups used: the local runner reads it from /proc. The stall rule (SPEC
// §11 "Stalled") counts CPU time as a sign of life where the runner is a
// CPUMeter, and only output and events where it is not (the Kubernetes
// runner: the pod's /proc is not this machine's).
type CPUMeter interface {
	// GroupCPU returns the CPU time (user and system, with that of the
	// children they waited for) of the live and exited-but-unreaped
	// processes of each process group in pgids, from one reading of every
	// process; a group with no process is missing from the map. The error
	// is /proc's, when it cannot be listed.
	GroupCPU(pgids []int) (map[int]time.Duration, error)
}

// Locator is a Runner that can tell which of its running submissions a
// process of this machine belongs to, whatever its environment, session
// and process group say: the local runner, from the process's cgroup
// where submissions run in cgroups of their own (SPEC §4). The nesting
// check asks it first.
type Locator interface {
	// Containing returns the id of the submission whose processes
	// include pid, "" when none does or it cannot tell.
	Containing(pid int) string
}

// StartRequest is one submission to start (Runner.Start).
type StartRequest struct {
	Command string // agent command line, run by /bin/sh -c
	// Dir is the host's working directory of agents (--dir); a runner that
	// runs elsewhere uses its own (SPEC §13).
	Dir string
	// Stdin writes the submission's stdin and closes it; Start runs it in
	// a goroutine of its own while the output is already read.
	Stdin func(stdin io.WriteCloser)
	// Vars are the submission's own variables of SPEC §2 as NAME=value:
	// SUBDASH_AGENT_ID, SUBDASH_SUBMISSION_ID, SUBDASH_SUBMISSION_SEQ and,
	// unless nesting is allowed, MEMO_ENABLE_COLLAB_TOOLS=0. The local
	// runner adds them to the host's environment; others pass only them
	// and what the user named.
	Vars         []string
	AgentID      string // the agent's id (a UUID)
	SubmissionID string // the submission's id (a UUID)
	Seq          int    // the submission's number in its agent, 1-based
	// Output receives every chunk of stdout or stderr in arrival order. It
	// may be called from one goroutine per stream at once.
	Output func(s Stream, p []byte)
	// Log and Display split Output for a runner that reads a flood in
	// batches (the local runner, SPEC §5): Log takes every chunk at once
	// (the log file, last_output, structured output's lines); Display
	// later takes the same bytes, in order, possibly several chunks joined,
	// for the display lines, so that of a batch completing more lines than
	// the scrollback keeps only the kept ones are built. Every byte given
	// to Log must reach Display before the streams end. A runner without
	// batches uses Output, which is Log then Display.
	Log, Display func(s Stream, p []byte)
	// Placed, when set, is called when the runner learns where the
	// submission runs, possibly after Start returned: the Kubernetes
	// runner calls it with the pod as soon as it is chosen and again with
	// its node once it runs.
	Placed func(Place)
}

// Place says where a submission runs, for the dashboard and list
// (SPEC §13; front-ends see it as Summary's Pod and Node). The zero Place
// is this machine.
type Place struct {
	PGID int    // its process group on this machine; 0 when it runs elsewhere
	Pod  string // the pod it runs in, "" for the local runner
	Node string // the node of that pod, once it is scheduled
}

// Exit is how a submission's main process ended (SPEC §4).
type Exit struct {
	Code   *int   // exit code; nil when killed by a signal or not known
	Signal string // signal name, e.g. "SIGKILL", when killed by one
	// Err, when set, is why the submission could not start or was lost
	// (a pod that cannot start, a cluster that became unreachable), in
	// words; the submission is then errored with it as last_error.
	Err string
}

// Process is one started submission (Runner.Start). Its methods are safe
// for concurrent use.
type Process interface {
	// Exited is closed when the main process has ended by itself or after
	// Terminate (or could not start).
	Exited() <-chan struct{}
	// Exit reports how the main process ended; the zero Exit until Exited
	// is closed.
	Exit() Exit
	// Lingers reports whether something the submission started is still
	// alive although its main process ended.
	Lingers() bool
	// WaitQuiet returns when both output streams reached their end or no
	// output arrived for quiet.
	WaitQuiet(quiet time.Duration)
	// Terminate ends everything the submission started (SPEC §4, §13):
	// SIGTERM, then SIGKILL after grace (or once cut is closed), and
	// returns when nothing of it is left, or with an error saying what
	// survived.
	Terminate(grace time.Duration, cut <-chan struct{}) error
	// Kill ends everything the submission started with SIGKILL at once, no
	// SIGTERM first, and returns when nothing of it is left, or with an
	// error saying what survived. The engine uses it for an agent CLI that
	// was sent its own interrupt and did not end within the grace period
	// (SPEC §4): a SIGTERM might make it send its killed tool's result to
	// the model.
	Kill() error
	// TerminateEscapees ends what the submission started that Terminate
	// cannot reach (processes that left the process group: SPEC §4) and
	// returns how many it signalled; 0 for a runner where Terminate
	// reaches everything.
	TerminateEscapees(grace time.Duration, cut <-chan struct{}) int
	// Drain waits until the output streams are read to their end (bounded,
	// as something outside the submission may hold them) and releases them.
	// Call it after Terminate.
	Drain()
	// Place is where the submission runs, as far as known.
	Place() Place
}

// Stream numbers a submission's output streams.
type Stream int

// The output streams of a submission.
const (
	Stdout Stream = 0
	Stderr Stream = 1
)

// KillWait bounds the wait for what a submission started to vanish after
// SIGKILL (a process in uninterruptible sleep): past it, Terminate returns
// an error naming what survived, and the supervisor ends the submission
// anyway.
const KillWait = 10 * time.Second

// ExitOf is how a main process ended, in SPEC §4's terms: killed by signal
// sig when sig is not 0 (Exit.Signal its name, such as "SIGKILL", or
// "signal N" for one without a name), else exited with code (Exit.Code).
// Every runner reports its submissions' ends through it: the local runner
// from the kernel's wait status, the Kubernetes runner from the status its
// wrapper shell reports.
func ExitOf(code int, sig syscall.Signal) Exit {
	if sig != 0 {
		name := unix.SignalName(sig)
		if name == "" {
			name = fmt.Sprintf("signal %d", int(sig))
		}
		return Exit{Signal: name}
	}
	return Exit{Code: &code}
}

// WaitQuiet is Process.WaitQuiet for every runner: it returns when done
// closes (the streams reached their end) or when lastRead (UnixNano of the
// latest output, 0 for none) is quiet in the past, counted from the call at
// the earliest. quiet is a wall-clock duration.
func WaitQuiet(lastRead *atomic.Int64, done <-chan struct{}, quiet time.Duration) {
	start := time.Now().UnixNano()
	for {
		last := max(lastRead.Load(), start)
		wait := quiet - time.Since(time.Unix(0, last))
		if wait <= 0 {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(wait):
		}
	}
}

package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/internal/fdlimit"
	"github.com/subdash/subdash/supervisor/runner"
)

const (
	// readBufSize is the size of the first read from a child's pipe; a
	// read that fills the buffer doubles it, up to maxReadBuf, so a quiet
	// stream costs little memory and a flood is read in few large reads.
	readBufSize = 64 << 10
	// pipeSize is the kernel buffer asked for each output pipe
	// (F_SETPIPE_SZ), so a flooding child blocks less often.
	pipeSize = 1 << 20
	// maxReadBuf is the largest read: all a full pipe holds.
	maxReadBuf = pipeSize
	// maxBatch and displayDelay: once reads are maxReadBuf large (a
	// flood), a reader reads into one buffer of maxBatch bytes and hands
	// what it holds to the display lines (runner.StartRequest.Display) when the
	// next read would not fit, displayDelay after the first byte it holds,
	// or before it waits for more; every read goes to the log at once. Of
	// a batch completing more lines than the scrollback keeps only the kept
	// lines are built (a flood completes far more lines in displayDelay
	// than the scrollback keeps). Lines are shown at most displayDelay
	// late, under a frame at 60 Hz.
	maxBatch     = 4 << 20
	displayDelay = 10 * time.Millisecond
	// batchIdle is how long a stream's pipe stays empty before its
	// flood counts as over and its batch buffer is given back.
	batchIdle = 100 * time.Millisecond
	// floodGap and gather: a read that did not fill the buffer, less than
	// floodGap after the read before it, is followed by a pause of gather
	// before the next read, so a child writing many small chunks fast is
	// read in a few large reads rather than one wake-up per chunk. Output
	// that trickles is read as it comes. gather is short enough that a
	// child writing as fast as it can does not fill the pipe meanwhile,
	// so it never waits, and long enough to save a wake-up per chunk
	// (BENCHMARKS.md, "A flood against the physical floor").
	floodGap = time.Millisecond
	gather   = 2 * time.Millisecond
	// drainTimeout bounds how long output is still read after the process
	// group is gone, in case a process that left the group (setsid, a
	// daemon) still holds the pipes open.
	drainTimeout = 500 * time.Millisecond
	// killWait bounds the wait for a group to vanish after SIGKILL (a process
	// in uninterruptible sleep); past it the submission ends anyway.
	killWait = runner.KillWait
)

// New returns the runner of SPEC §4 (--runner local): each submission is a
// `/bin/sh -c` child of this process in its own session and process group,
// in the working directory, with environ (the host's environment) plus the
// submission's variables.
func New(environ []string) runner.Runner { return localRunner{environ: environ} }

// Factory is New as a runner.Factory, for runner.Register: the
// environment is Settings.Environ; where a cgroup v2 hierarchy is
// writable, each submission also runs in a cgroup of its own under one of
// the host's (cgroup.go). It never fails.
func Factory(s runner.Settings) (runner.Runner, error) {
	return localRunner{environ: s.Environ, cg: newHostCgroups(s.Host)}, nil
}

type localRunner struct {
	environ []string
	cg      *hostCgroups // nil: the process group alone
}

// The local runner tells the CPU time of its process groups (procfs.go)
// and, with cgroups, which submission a process is of (cgroup.go).
var (
	_ runner.CPUMeter = localRunner{}
	_ runner.Locator  = localRunner{}
)

// Sweep ends and removes the cgroups of hosts that are gone (cgroup.go);
// the orphan sweep (Orphans, orphans.go), which the engine runs whatever
// the runner, ends the process groups earlier hosts left on this machine.
func (r localRunner) Sweep(string) string { return r.cg.sweep() }

// Close ends what is left in the host's cgroups and removes them; every
// process group is gone once its submission ended.
func (r localRunner) Close(context.Context) error { return r.cg.close() }

// Containing implements runner.Locator: the submission whose cgroup holds
// process pid, "" without cgroups.
func (r localRunner) Containing(pid int) string { return r.cg.containing(pid) }

// Start implements runner.Runner.
func (r localRunner) Start(req runner.StartRequest) (runner.Process, error) {
	out := streamSink{req.Output, nil}
	if req.Log != nil && req.Display != nil {
		out = streamSink{req.Log, req.Display}
	}
	into := r.cg.forSubmission(req.SubmissionID)
	p, err := startProcess(req.Command, req.Dir, mergeEnv(r.environ, req.Vars), req.Stdin, out, into)
	if err != nil {
		into.started(0, err)
		return nil, err
	}
	p.submissionID = req.SubmissionID
	return p, nil
}

// mergeEnv returns base with vars (NAME=value) set, replacing the same
// names in base, vars last.
func mergeEnv(base, vars []string) []string {
	set := make(map[string]bool, len(vars))
	for _, kv := range vars {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	env := make([]string, 0, len(base)+len(vars))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !set[k] {
			env = append(env, kv)
		}
	}
	return append(env, vars...)
}

// process is one running `/bin/sh -c` child in its own session and
// process group (SPEC §4).
type process struct {
	cmd          *exec.Cmd
	pgid         int
	cg           *subCgroup // its cgroup; nil for none
	submissionID string
	exited       chan struct{} // closed when the main process has been reaped
	stdin        *os.File
	outs         [2]int          // read ends of stdout and stderr (outputPipe), -1 once closed
	wake         int             // eventfd, readable once Drain set the deadlines
	deadlines    [2]atomic.Int64 // per stream: when reading is next reconsidered, Unix nanoseconds, 0 before Drain
	closeOnce    sync.Once
	readers      atomic.Int32  // readers still reading
	readersDone  chan struct{} // closed when both readers returned
	lastRead     atomic.Int64  // when a reader last got bytes, in Unix nanoseconds
	drainCh      chan struct{} // closed by Drain: a waiting reader looks at its deadline
	drainOnce    sync.Once
	poller       *poller            // the shared poller (nil with shapeThread and shapeNetpoll)
	files        [2]*os.File        // shapeNetpoll: the read ends, in Go's netpoller
	polls        [2]*pollEntry      // the pipes' entries in poller
	ready        [2]chan struct{}   // a pipe's entry reported readiness
	timers       [2]*time.Timer     // each reader's timer of awaitShared
	status       syscall.WaitStatus // how the main process ended, once exited is closed
	statusKnown  bool               // status was read (a failed wait leaves the zero Exit)
}

// readerDone marks one reader returned; the last closes readersDone.
func (p *process) readerDone() {
	if p.readers.Add(-1) == 0 {
		close(p.readersDone)
	}
}

// The reader shapes compared in BENCHMARKS.md "A thousand agents".
const (
	shapeThread = "thread" // poll(2) per waiting pipe, wait4(2) per process
	shapeShared = "shared" // every wait in the shared poller
	shapeHybrid = "hybrid" // quiet pipes and exits in the poller, a flood in poll(2)
	// shapeNetpoll: Go's own reading of pipes: the read ends are files in
	// Go's netpoller, waited on there, and each process is waited for
	// by cmd.Wait.
	shapeNetpoll = "netpoll"
)

// readerShape is the reader shape; SUBDASH_READER_SHAPE overrides it for
// the comparison.
var readerShape = func() string {
	if v := os.Getenv("SUBDASH_READER_SHAPE"); v != "" {
		return v
	}
	return shapeHybrid
}()

// startError is the error of a process that could not start: err, and
// the limit that caused it when one did (fdlimit.Hint: too many open
// files, no process could be made).
func startError(err error) error {
	return fmt.Errorf("cannot start submission: %w%s", err, fdlimit.Hint(err))
}

// startProcess starts command under /bin/sh -c in dir with env, in a new
// session (and in the cgroup into, when not nil), hands its stdin to feed
// in a goroutine of its own (feedMessage writes the message and a
// newline, then closes it; SPEC §4), and feeds stdout and stderr to out
// until EOF.
func startProcess(command, dir string, env []string, feed func(stdin io.WriteCloser), out streamSink, into *subCgroup) (*process, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("cannot start submission: working directory %s does not exist", dir)
	}
	if err := checkPids(); err != nil {
		return nil, err
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, startError(err)
	}
	p := &process{exited: make(chan struct{}), stdin: stdinW, outs: [2]int{-1, -1}, wake: -1,
		readersDone: make(chan struct{}), drainCh: make(chan struct{})}
	var outW [2]*os.File
	for i := range outW {
		if p.outs[i], outW[i], err = outputPipe(); err != nil {
			closeAll(stdinR, outW[0])
			p.closePipes()
			return nil, startError(err)
		}
	}
	switch readerShape {
	case shapeThread:
		if p.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
			closeAll(stdinR, outW[0], outW[1])
			p.closePipes()
			return nil, fmt.Errorf("cannot start submission: eventfd: %w", err)
		}
	case shapeNetpoll:
		for s := range p.files {
			p.files[s] = os.NewFile(uintptr(p.outs[s]), "|0") // non-blocking: in the netpoller
		}
	default:
		if p.poller, err = sharedPoller(); err != nil {
			closeAll(stdinR, outW[0], outW[1])
			p.closePipes()
			return nil, startError(err)
		}
		for s := range p.polls {
			ready := make(chan struct{}, 1)
			p.ready[s] = ready
			p.polls[s] = p.poller.register(p.outs[s], false, func() bool {
				select {
				case ready <- struct{}{}:
				default:
				}
				return false
			})
		}
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = stdinR
	cmd.Stdout = outW[runner.Stdout]
	cmd.Stderr = outW[runner.Stderr]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	into.prepare(cmd)
	err = cmd.Start()
	closeAll(stdinR, outW[0], outW[1])
	if err != nil {
		p.closePipes()
		return nil, startError(err)
	}
	p.cmd, p.pgid = cmd, cmd.Process.Pid
	p.cg = into.started(p.pgid, nil)
	go feed(stdinW)
	p.readers.Store(2)
	for s := runner.Stdout; s <= runner.Stderr; s++ {
		go p.read(s, out)
	}
	reaped := false
	switch {
	case readerShape == shapeNetpoll:
		reaped = p.reapInNetpoller()
	case p.poller != nil:
		reaped = p.reapInPoller()
	}
	if !reaped {
		go func() {
			_ = cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
				p.status, p.statusKnown = ws, true
			}
			close(p.exited)
		}()
	}
	return p, nil
}

// WaitQuiet returns when both pipes reached EOF or no output arrived for
// quiet: after the main process exited, what it wrote is then read.
func (p *process) WaitQuiet(quiet time.Duration) {
	runner.WaitQuiet(&p.lastRead, p.readersDone, quiet)
}

// Exited implements runner.Process.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit describes how the main process ended; the zero Exit while it has
// not been reaped.
func (p *process) Exit() runner.Exit {
	select {
	case <-p.exited:
	default:
		return runner.Exit{}
	}
	if !p.statusKnown {
		return runner.Exit{}
	}
	if p.status.Signaled() {
		return runner.ExitOf(0, p.status.Signal())
	}
	return runner.ExitOf(p.status.ExitStatus(), 0)
}

// Lingers reports whether a member of the process group, or a process
// of its cgroup, is alive.
func (p *process) Lingers() bool { return groupAlive(p.pgid) || p.cg.populated() }

// Terminate ends the process group (terminateGroup), whose leader is the
// main process, and the whole cgroup where it has one
// (subCgroup.terminate).
func (p *process) Terminate(grace time.Duration, cut <-chan struct{}) error {
	if p.cg != nil {
		return p.cg.terminate(p.pgid, grace, cut, p.exited)
	}
	return terminateGroup(p.pgid, grace, cut, p.exited)
}

// Kill ends the process group with SIGKILL at once (killGroup), and the
// whole cgroup where it has one (subCgroup.kill), so a daemon that left the
// group does not outlive a kill either.
func (p *process) Kill() error {
	if p.cg != nil {
		return p.cg.kill(p.pgid, p.exited)
	}
	return killGroup(p.pgid, p.exited)
}

// TerminateEscapees ends the processes that left the group but carry the
// submission's id (escapees.go).
func (p *process) TerminateEscapees(grace time.Duration, cut <-chan struct{}) int {
	return terminateEscapees(p.submissionID, grace, cut)
}

// Place is this machine and the process group.
func (p *process) Place() runner.Place { return runner.Place{PGID: p.pgid} }

// terminateGroup ends every process of group pgid (SPEC §4): SIGTERM (and
// SIGCONT, so a stopped process can act on it) to the whole group, then
// SIGKILL after grace (or once cut is closed: the engine's SkipGrace) if any
// member is still alive. It returns when no
// process of the group is left, or after killWait past the SIGKILL with an
// error naming the survivors' group. leader, when not nil, is closed once
// the group's leader (a submission's main process) has been reaped.
//
// The group is signalled without asking /proc first (a group of zombies
// takes the signal harmlessly), so that a thousand groups ended at once
// are all signalled at once, then waited for together (GroupMembers).
func terminateGroup(pgid int, grace time.Duration, cut, leader <-chan struct{}) error {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	if waitGroupGone(pgid, grace, cut, leader) {
		return nil
	}
	return killGroup(pgid, leader)
}

// killGroup sends SIGKILL to every process of group pgid and returns when
// none is left, or after killWait with an error naming the survivors'
// group; leader is as for waitGroupGone.
func killGroup(pgid int, leader <-chan struct{}) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	if waitGroupGone(pgid, killWait, nil, leader) {
		return nil
	}
	return fmt.Errorf("process group %d survived SIGKILL for %s", pgid, killWait)
}

// waitGroupGone waits until group pgid has no live member, d has passed or
// cut is closed, and reports whether the group is gone. While leader (nil:
// not known) is open the group lives, its leader does: that is waited for
// without a look at /proc, which at a thousand groups ended together
// (quit, close --all) was the most of the host's work, each look reading
// every process's stat. Then it polls (groupAlive), which a group whose
// leader was its only member answers with one kill(2).
func waitGroupGone(pgid int, d time.Duration, cut, leader <-chan struct{}) bool {
	deadline := time.Now().Add(d)
	if leader != nil {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-leader:
		case <-cut:
			return false
		case <-t.C:
			return false
		}
	}
	return pollUntil(func() bool { return !groupAlive(pgid) }, time.Until(deadline), cut)
}

// pollUntil checks done every 1 ms, backing off to 10 ms, until it holds, d
// has passed or cut is closed (nil: never), and reports whether it held.
// Termination has no event to wait on for processes that are not our
// children.
func pollUntil(done func() bool, d time.Duration, cut <-chan struct{}) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-cut:
			return done()
		case <-time.After(step):
		}
		if step < 10*time.Millisecond {
			step *= 2
		}
	}
}

// groupAlive reports whether process group pgid has a member that is not a
// zombie. kill(-pgid, 0) answers for most cases; zombies (exited but not yet
// reaped by their parent, which may be an init that never reaps) still
// count for kill, so when it succeeds /proc is read to skip them.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	members, err := GroupMembers(pgid)
	if err != nil {
		return true
	}
	return len(members) > 0
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

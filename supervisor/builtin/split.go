package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/subdash/subdash/supervisor/proto"
)

// Delegate is the host a task that delegates (split, SPEC §14) spawns its
// children through: *client.Client on the socket of SUBDASH_SOCKET is
// one. The host knows the calling process by its peer credentials, so
// every agent spawned here is a child of the agent running this task.
type Delegate interface {
	// SpawnAgent spawns a child; at the host's limit of running
	// submissions it fails with a *proto.Error of proto.CodeLimit.
	SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error)
	// Wait returns as soon as one of ids is final, with the final ones
	// (SPEC §3 wait; ms is its timeout in milliseconds, nil for 30 s).
	Wait(ctx context.Context, ids []string, ms *int) (proto.WaitResult, error)
	// Info describes the host; split reads its limit of running agents
	// (MaxAgents, SPEC §2 --max-agents).
	Info(ctx context.Context) (proto.Info, error)
	// List returns the summary of every agent of the host (SPEC §3 list).
	List(ctx context.Context) (proto.ListResult, error)
	// Events calls fn with every agent's summary, then with an agent's
	// summary each time it changes, until ctx ends or fn returns an
	// error, which it returns (GET /v1/events): split learns from them
	// when a slot of the host's limit frees.
	Events(ctx context.Context, fn func(proto.Summary) error) error
}

// errNoDelegate is split's error when the agent runs outside a host that
// lets its agents spawn children.
var errNoDelegate = errors.New("split spawns child agents through its host's control socket, and SUBDASH_SOCKET is not set: run it as an agent of a host started with --allow-nested (subdash serve --allow-nested)")

// NoHostOn is the Delegate of an agent that runs on runner (SPEC §13: a
// pod), from where its host's control socket, a Unix socket on the host's
// machine, cannot be reached: split fails at once saying so.
func NoHostOn(runner string) Delegate { return unreachable(runner) }

// unreachable is NoHostOn's Delegate: the runner's name.
type unreachable string

func (u unreachable) err() error {
	return fmt.Errorf("split spawns child agents through its host's control socket, which a submission on the %s runner cannot reach (a Unix socket on the host's machine): audit the folder with audit PATH, or run the host with --runner local and --allow-nested", string(u))
}

// SpawnAgent is Delegate's: it spawns nothing and returns u.err().
func (u unreachable) SpawnAgent(context.Context, proto.SpawnRequest) (proto.SpawnResult, error) {
	return proto.SpawnResult{}, u.err()
}

// Wait is Delegate's: it waits for nothing and returns u.err().
func (u unreachable) Wait(context.Context, []string, *int) (proto.WaitResult, error) {
	return proto.WaitResult{}, u.err()
}

// Info is Delegate's: it returns u.err().
func (u unreachable) Info(context.Context) (proto.Info, error) { return proto.Info{}, u.err() }

// List is Delegate's: it returns u.err().
func (u unreachable) List(context.Context) (proto.ListResult, error) {
	return proto.ListResult{}, u.err()
}

// Events is Delegate's: it calls fn never and returns u.err().
func (u unreachable) Events(context.Context, func(proto.Summary) error) error { return u.err() }

// splitWaitMS is how long one wait for the children lasts before the next
// one, in milliseconds (wait's longest).
const splitWaitMS = proto.MaxWaitTimeoutMS

// child is one agent a split spawned.
type child struct {
	id, path, message string
}

// taskNameChars are the characters a task name may hold (SPEC §14).
const taskNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"

// taskNameRE is the task name rule of SPEC §14 (Memo's).
var taskNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// split audits t.path by delegating: one child agent per subfolder
// (gitignored ones, .git and symbolic links left out), each spawned with
// "audit <subfolder>" and the subfolder's name as its task name (see
// taskName; name-2 and on when an earlier split holds the path), while it
// audits the files directly in t.path itself; then it waits for every
// child and prints a line for each as it ends (its status and its last
// line) and the markers of all together (counted from the find summary in
// each child's last output: a child steered to a further task counts what
// that task's summary says). At the host's concurrency limit it says so
// and spawns the next child as soon as any agent of the host frees a slot
// (waitSlot). A child that errored makes the task fail after every child
// has ended.
func split(ctx context.Context, cfg config, t task, out *printer, stderr io.Writer) error {
	if cfg.delegate == nil {
		return errNoDelegate
	}
	if u, ok := cfg.delegate.(unreachable); ok {
		return u.err()
	}
	w := &walker{fsys: cfg.fsys, dir: cfg.dir, out: out, stderr: stderr}
	target, err := w.resolve(t.path)
	if err != nil {
		return err
	}
	if !target.info.IsDir() {
		return fmt.Errorf("split takes a folder, and %s is a file: audit it instead", target.display)
	}
	dirs, err := w.subfolders(target)
	if err != nil {
		return err
	}
	s := &splitRun{ctx: ctx, d: cfg.delegate, out: out, totals: map[string]int{}}
	for _, dir := range dirs {
		if err := s.spawn(dir); err != nil {
			return err
		}
	}
	if len(dirs) == 0 {
		out.printf("no subfolders in %s to delegate", target.display)
	}
	// the files directly in the folder are this agent's own
	own := findStats{lines: map[string]int{}, files: map[string]int{}}
	w.shallow = true
	err = w.walk(ctx, target, func(f file) error { return findInFile(cfg, w, markers, f, out, &own) })
	if err != nil {
		return err
	}
	out.printf("scanned %s directly in %s myself", plural(own.scanned, "file"), target.display)
	for m, n := range own.lines {
		s.totals[m] += n
	}
	for len(s.running) > 0 {
		if err := s.waitOne(); err != nil {
			return err
		}
	}
	out.printf("")
	parts := make([]string, 0, len(markers))
	for _, m := range markers {
		parts = append(parts, fmt.Sprintf("%s: %d", m, s.totals[m]))
	}
	out.printf("%s in %s (%s and my own files)", strings.Join(parts, ", "), target.display, plural(len(dirs), "child agent"))
	if out.err == nil && s.failed > 0 {
		return fmt.Errorf("%d of %s did not complete", s.failed, plural(len(dirs), "child agent"))
	}
	return out.err
}

// splitRun is the state of one split: the children still running and what
// the ended ones found.
type splitRun struct {
	ctx     context.Context
	d       Delegate
	out     *printer
	running []child
	totals  map[string]int // marker lines found, by marker
	failed  int            // children that ended otherwise than completed
	// waitingFor is the task of the child it last said it waits for a
	// slot for (waitSlot says so once for each).
	waitingFor string
}

// spawn starts the child auditing target dir, waiting for a free slot
// while the host is at its limit.
func (s *splitRun) spawn(dir target) error {
	name := taskName(path.Base(filepath.ToSlash(dir.abs)))
	req := proto.SpawnRequest{Message: "audit " + dir.display, TaskName: name}
	refused := false // the host refused it for its limit once already
	for n := 2; ; {
		res, err := s.d.SpawnAgent(s.ctx, req)
		if err == nil {
			s.running = append(s.running, child{id: res.AgentID, path: res.AgentPath, message: req.Message})
			s.out.printf("→ spawned %s: %s", res.AgentPath, req.Message)
			return s.out.err
		}
		switch code := proto.CodeOf(err); {
		case code == proto.CodeExists && name != "" && n <= maxNameTries:
			// an earlier split of this agent (a resend) holds the path
			req.TaskName = fmt.Sprintf("%s-%d", name, n)
			n++
		case code == proto.CodeLimit:
			if err := s.waitSlot(req.Message, refused); err != nil {
				return err
			}
			refused = true
		default:
			return fmt.Errorf("cannot spawn a child to %s: %w", req.Message, err)
		}
	}
}

// maxNameTries is the highest suffix tried on a task name whose path is
// taken (name-2 … name-9).
const maxNameTries = 9

// taskName makes a folder's name a task name (SPEC §14's rule): every
// character but letters, digits, _ and - becomes -, and leading ones that
// cannot start a name go; "" when nothing is left (the path then ends
// with the short id).
func taskName(folder string) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(taskNameChars, r) {
			return r
		}
		return '-'
	}, folder)
	name = strings.TrimLeft(name, "-_")
	if !taskNameRE.MatchString(name) {
		return ""
	}
	return name
}

// waitOne waits until at least one running child is final and reports
// each that is.
func (s *splitRun) waitOne() error {
	ids := make([]string, len(s.running))
	for i, c := range s.running {
		ids[i] = c.id
	}
	ms := splitWaitMS
	res, err := s.d.Wait(s.ctx, ids, &ms)
	if err != nil {
		return fmt.Errorf("cannot wait for the child agents: %w", err)
	}
	left := s.running[:0]
	for _, c := range s.running {
		d, ok := res.Details[c.id]
		if !ok {
			left = append(left, c)
			continue
		}
		s.report(c, d)
	}
	s.running = left
	return s.out.err
}

// errSlotFreed ends the watch of waitSlot: an agent's change left the
// host below its limit.
var errSlotFreed = errors.New("a slot freed")

// waitSlot waits, after the host refused the child to do task at its
// limit of running agents, until an agent of the host changes and leaves
// fewer running than that limit: any agent's end frees a slot, not only
// one of this split's children. again says the host refused the child
// after a wait already: a slot the list shows free is then one that is
// not free yet (a closed agent's processes still ending), and it waits
// for the next change instead of asking at once. It says in the log that
// it waits and how full the host is ("waiting for a slot: 2/2 running"),
// once for each child, and reports the children of its own that ended
// meanwhile. A host that runs one agent at most can never run a child
// beside this split, which holds that slot: that fails at once saying
// what to do. Errors: the host cannot be asked or watched; the task is
// stopped (ctx).
func (s *splitRun) waitSlot(task string, again bool) error {
	info, err := s.d.Info(s.ctx)
	if err != nil {
		return fmt.Errorf("cannot ask the host for its limit of running agents: %w", err)
	}
	if info.MaxAgents < 2 {
		return fmt.Errorf("cannot spawn a child to %s: the host runs at most %s at once (--max-agents %d), and this split is one; raise --max-agents, or audit the folder with audit PATH",
			task, plural(info.MaxAgents, "agent"), info.MaxAgents)
	}
	ls, err := s.d.List(s.ctx)
	if err != nil {
		return fmt.Errorf("cannot list the host's agents: %w", err)
	}
	agents := make(map[string]proto.Summary, len(ls.Agents))
	for _, a := range ls.Agents {
		agents[a.AgentID] = a
	}
	running := func() int {
		n := 0
		for _, a := range agents {
			if a.Status == proto.StatusRunning {
				n++
			}
		}
		return n
	}
	if again || running() >= info.MaxAgents { // else a slot freed since the refusal: ask at once
		if s.waitingFor != task {
			s.waitingFor = task
			// the host's refusal says it is full, whatever the list shows
			// of a closed agent whose processes still end
			s.out.printf("waiting for a slot: %d/%d running", max(running(), info.MaxAgents), info.MaxAgents)
		}
		ctx, cancel := context.WithCancel(s.ctx)
		err = s.d.Events(ctx, func(a proto.Summary) error {
			before, known := agents[a.AgentID]
			agents[a.AgentID] = a
			if (!known || a.UpdatedAt.After(before.UpdatedAt.Time)) && running() < info.MaxAgents {
				return errSlotFreed
			}
			return nil // the state it listed, or one that frees nothing
		})
		cancel()
		if !errors.Is(err, errSlotFreed) {
			if s.ctx.Err() != nil {
				return s.ctx.Err()
			}
			return fmt.Errorf("cannot watch the host for a free slot: %w", err)
		}
	}
	for _, c := range s.running {
		if a, ok := agents[c.id]; ok && a.Status.Final() {
			return s.waitOne() // one of its own ended: say so now (the wait returns at once)
		}
	}
	return s.out.err
}

// markerCountRE is a find summary line: "TODO: 3 in 2 files", "XXX: 0".
var markerCountRE = regexp.MustCompile(`^(TODO|FIXME|XXX|HACK): (\d+)`)

// report prints the end of child c and adds the markers its last output
// counts to the totals.
func (s *splitRun) report(c child, d proto.WaitDetail) {
	last := ""
	if d.LastOutput != nil {
		for _, line := range strings.Split(*d.LastOutput, "\n") {
			line = strings.TrimSpace(line)
			if m := markerCountRE.FindStringSubmatch(line); m != nil {
				var n int
				fmt.Sscan(m[2], &n) //nolint:errcheck // \d+ always scans
				s.totals[m[1]] += n
			}
			if line != "" && !strings.HasPrefix(line, "↪") {
				last = line
			}
		}
	}
	if d.Status != proto.StatusCompleted {
		s.failed++
		if d.LastError != nil && *d.LastError != "" {
			last = *d.LastError
		}
		s.out.printf("✗ %s %s: %s", c.path, d.Status, oneLine(last))
		return
	}
	s.out.printf("✓ %s: %s", c.path, oneLine(last))
}

// subfolders lists the folders directly in directory t that a walk would
// enter, in name order: not .git, no symbolic link, not on a pseudo file
// system, not ignored by .gitignore.
func (w *walker) subfolders(t target) ([]target, error) {
	comps, patterns := w.ancestorPatterns(t)
	entries, err := fs.ReadDir(w.fsys, t.name)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", t.display, cause(err))
	}
	patterns = append(patterns, w.readIgnoreFile(t.name, t.abs, comps)...)
	matcher := gitignore.NewMatcher(patterns)
	var dirs []target
	for _, e := range entries {
		if !e.IsDir() || e.Name() == ".git" || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if len(patterns) > 0 && matcher.Match(append(comps[:len(comps):len(comps)], e.Name()), true) {
			continue
		}
		abs := filepath.Join(t.abs, e.Name())
		if pseudoFilesystem(abs) != "" {
			continue
		}
		dirs = append(dirs, target{abs: abs, name: path.Join(t.name, e.Name()), display: displayPath(w.dir, abs)})
	}
	return dirs, nil
}

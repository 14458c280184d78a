package supervisor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// The agent tree (SPEC §14). Every agent has a path: its parent's path
// (proto.RootPath for an agent spawned from outside every submission), a
// slash, and its task name or short id. The parent of a spawn is the
// agent whose running submission made the call (proto.Caller.AgentID, as
// the control socket finds it from the calling process); siblings are
// unique, case-sensitive as Memo's paths; with --allow-nested the depth is
// bounded by --max-depth. s.paths indexes every agent by its path,
// restored agents too, so a restored agent keeps its path until it is
// forgotten.

// placeLocked returns where a new agent with id and taskName ("" for its
// short id) goes in the tree when c spawns it: its path, task name and
// parent's id. Errors: a bad task name (Memo's text); the calling agent
// is closed; the depth limit; the path is held (naming the holder). Call
// with s.mu held.
func (s *Supervisor) placeLocked(id string, c proto.Caller, taskName string) (path, name, parentID string, err error) {
	leaf := termtext.ShortID(id)
	if taskName != "" {
		if name, err = proto.CheckTaskName(taskName); err != nil {
			return "", "", "", err
		}
		leaf = name
	}
	parentPath := proto.RootPath
	if p := s.agents[c.AgentID]; p != nil {
		if p.status == proto.StatusClosed {
			return "", "", "", &proto.Error{Code: proto.CodeClosed, Message: fmt.Sprintf("agent %s (%s) is closed: its submission may not spawn agents", p.path, p.id)}
		}
		parentPath, parentID = p.path, p.id
	}
	path = proto.JoinPath(parentPath, leaf)
	if limit := s.cfg.MaxDepth; proto.PathDepth(path) > limit {
		return "", "", "", proto.ErrDepth(limit)
	}
	if h := s.paths[path]; h != nil {
		return "", "", "", proto.ErrPathExists(path, holderText(h), h.running == nil && !h.replacing)
	}
	return path, name, parentID, nil
}

// holderText says in words which agent holds a path: its short id, status,
// whether it was restored and how long ago it changed.
func holderText(h *agent) string {
	t := "held by agent " + termtext.ShortID(h.id) + ", " + string(h.status)
	if h.restored {
		t += ", restored from an earlier run"
	}
	return t + ", updated " + ago(time.Since(h.updatedAt)) + " ago"
}

// ago is a duration in the largest whole unit: "40s", "3m", "5h", "2d".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// pathOfLocked returns the path of caller c: its agent's path, or the root.
func (s *Supervisor) pathOfLocked(c proto.Caller) string {
	if a := s.agents[c.AgentID]; a != nil {
		return a.path
	}
	return proto.RootPath
}

// lookup resolves target for a caller outside every submission (the
// root). Call with s.mu held.
func (s *Supervisor) lookup(target string) (*agent, error) {
	return s.resolveLocked(proto.Caller{}, target)
}

// resolveLocked finds the agent target names for caller c (SPEC §14, as
// Memo's registry.resolve): its exact id (case ignored, as RFC 9562
// compares UUIDs), an absolute path, a path relative to the caller's, a
// path relative to the root, then (unless c.Exact) a unique id prefix of
// at least 4 characters. Two different agents found by these are an
// error naming both. Errors: "agent not found: <target>" (followed, for a
// short hexadecimal target, by a word on prefixes); an ambiguous target
// or id prefix. Call with s.mu held.
func (s *Supervisor) resolveLocked(c proto.Caller, target string) (*agent, error) {
	target = strings.TrimSpace(target)
	key := strings.ToLower(target)
	if a, ok := s.agents[key]; ok {
		return a, nil
	}
	if strings.HasPrefix(target, "/") {
		if a := s.paths[target]; a != nil {
			return a, nil
		}
		if target == proto.RootPath && !c.Exact { // the multi-agent family keeps Memo's texts
			// SPEC §3's text stays first: programs match on it.
			return nil, &proto.Error{Code: proto.CodeNotFound, Message: "agent not found: /root is the root of the tree, not an agent; name one below it (subdash ctl list --tree)"}
		}
		return nil, proto.ErrNotFound(target)
	}
	var found []*agent
	add := func(a *agent) {
		if a != nil && !slices.Contains(found, a) {
			found = append(found, a)
		}
	}
	if target != "" {
		if p := s.agents[c.AgentID]; p != nil {
			add(s.paths[proto.JoinPath(p.path, target)])
		}
		add(s.paths[proto.JoinPath(proto.RootPath, target)])
	}
	if !c.Exact && len(key) >= 4 {
		var byPrefix []*agent
		for _, a := range s.order {
			if strings.HasPrefix(a.id, key) {
				byPrefix = append(byPrefix, a)
			}
		}
		if len(byPrefix) > 1 && len(found) == 0 {
			return nil, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("agent id prefix %s matches more than one agent; give more characters", target)}
		}
		for _, a := range byPrefix {
			add(a)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if !c.Exact && key != "" && len(key) < 4 && strings.Trim(key, "0123456789abcdef-") == "" {
			// SPEC §3's text stays first: programs match on it.
			return nil, &proto.Error{Code: proto.CodeNotFound, Message: "agent not found: " + target + "; an id prefix needs at least 4 characters"}
		}
		return nil, proto.ErrNotFound(target)
	}
	names := make([]string, len(found))
	for i, a := range found {
		names[i] = a.path + " (" + termtext.ShortID(a.id) + ")"
	}
	return nil, proto.ErrAmbiguous(target, names)
}

// subtreeLocked returns a and its descendants, deepest first (Memo's
// shutdown order), then by age. Call with s.mu held.
func (s *Supervisor) subtreeLocked(a *agent) []*agent {
	out := []*agent{a}
	for _, d := range s.order {
		if d != a && strings.HasPrefix(d.path, a.path+"/") {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(x, y *agent) int { return proto.PathDepth(y.path) - proto.PathDepth(x.path) })
	return out
}

// lockTree takes the operation locks (agent.opMu) of the agent target
// names and of its descendants (lockTrees). It returns the subtree
// (subtreeLocked's order) and the function that releases the locks.
func (s *Supervisor) lockTree(c proto.Caller, target string) ([]*agent, func(), error) {
	trees, unlock, err := s.lockTrees(func() ([]*agent, error) {
		a, err := s.resolveLocked(c, target)
		return []*agent{a}, err
	})
	if err != nil {
		return nil, nil, err
	}
	return trees[0], unlock, nil
}

// lockTrees takes the operation locks of the agents pick returns (called
// with s.mu held) and of their descendants, in one order (by id) so that
// two operations on overlapping subtrees never wait for each other in a
// circle; pick and the subtrees are read again after, until no agent
// joined or left them meanwhile. It returns each picked agent's subtree
// (subtreeLocked's order) and the function that releases the locks.
func (s *Supervisor) lockTrees(pick func() ([]*agent, error)) ([][]*agent, func(), error) {
	subtrees := func() ([][]*agent, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		roots, err := pick()
		if err != nil {
			return nil, err
		}
		trees := make([][]*agent, len(roots))
		for i, a := range roots {
			trees[i] = s.subtreeLocked(a)
		}
		return trees, nil
	}
	for {
		trees, err := subtrees()
		if err != nil {
			return nil, nil, err
		}
		var byID []*agent
		for _, t := range trees {
			byID = append(byID, t...)
		}
		slices.SortFunc(byID, func(x, y *agent) int { return strings.Compare(x.id, y.id) })
		byID = slices.Compact(byID)
		for _, d := range byID {
			d.opMu.Lock()
		}
		unlock := func() {
			for _, d := range byID {
				d.opMu.Unlock()
			}
		}
		again, err := subtrees()
		if err == nil && slices.EqualFunc(again, trees, slices.Equal) {
			return trees, unlock, nil
		}
		unlock()
		if err != nil {
			return nil, nil, err
		}
	}
}

// treeAgentLocked is agent a as the multi-agent family shows it (SPEC
// §14, Memo's compactAgent). Call with s.mu held.
func (s *Supervisor) treeAgentLocked(a *agent) proto.TreeAgent {
	ta := proto.TreeAgent{AgentID: a.id, AgentPath: a.path, TaskName: a.path[strings.LastIndexByte(a.path, '/')+1:],
		LastMessage: copyStr(a.lastOutput), PendingQuestions: questionsLocked(a)}
	switch {
	case a.status == proto.StatusClosed:
		ta.Status = proto.TreeShutdown
	case a.running != nil || a.replacing:
		ta.Status = proto.TreeRunning
	case a.pending:
		ta.Status = proto.TreePendingInit
	case a.status == proto.StatusErrored && a.lastError != nil && strings.HasPrefix(*a.lastError, "interrupted"):
		ta.Status = proto.TreeInterrupted
	case a.status == proto.StatusErrored:
		ta.Status, ta.Error = proto.TreeErrored, copyStr(a.lastError)
	default:
		ta.Status = proto.TreeCompleted
	}
	return ta
}

// treeAgent is treeAgentLocked taking s.mu.
func (s *Supervisor) treeAgent(a *agent) proto.TreeAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.treeAgentLocked(a)
}

// SpawnTree is spawn_agent of the multi-agent family (SPEC §14): SpawnAgent
// for the caller of ctx, answering the new agent as the family shows it.
// Errors are Memo's: "message must not be empty", the task name's,
// "subagent depth limit reached (<max>)", "agent path already exists:
// <path>" (with its holder), "subagent concurrency limit reached".
func (s *Supervisor) SpawnTree(ctx context.Context, message, taskName string) (proto.TreeAgent, error) {
	if strings.TrimSpace(taskName) == "" {
		_, err := proto.CheckTaskName(taskName)
		return proto.TreeAgent{}, err
	}
	res, err := s.SpawnAgent(ctx, proto.SpawnRequest{Message: message, TaskName: taskName})
	if proto.CodeOf(err) == proto.CodeLimit {
		err = &proto.Error{Code: proto.CodeLimit, Message: "subagent concurrency limit reached"}
	}
	if err != nil {
		return proto.TreeAgent{}, err
	}
	// The agent as it was spawned, as Memo answers: running (or
	// pending_init), no last message yet, even when a quick submission has
	// already ended by now (wait_agent tells its end).
	ta := proto.TreeAgent{AgentID: res.AgentID, AgentPath: res.AgentPath, TaskName: res.AgentPath[strings.LastIndexByte(res.AgentPath, '/')+1:], Status: proto.TreeRunning}
	if res.PendingStart {
		ta.Status = proto.TreePendingInit
	}
	return ta, nil
}

// MessageAgent is send_message (followup false) and followup_task
// (followup true) of the multi-agent family (SPEC §14). A held message never starts
// a submission nor reaches a running one: the agent's next submission
// takes it. A follow-up starts that submission now when the agent is idle
// (at the concurrency limit as soon as a slot frees: pending_init), else
// when the running one ends (deliver). Target /root is the root mailbox
// of the caller's tree. It answers the receiver. Errors (Memo's): "message
// must not be empty"; "agent not found: <target>"; "follow-up tasks cannot
// target the root agent"; "agent is shutdown" for a closed agent.
func (s *Supervisor) MessageAgent(ctx context.Context, target, message string, followup bool) (proto.TreeAgent, error) {
	m, err := NewMessage(message)
	if err != nil {
		return proto.TreeAgent{}, err
	}
	c := proto.CallerOf(ctx)
	if strings.TrimSpace(target) == proto.RootPath {
		if followup {
			return proto.TreeAgent{}, &proto.Error{Code: proto.CodeInvalid, Message: "follow-up tasks cannot target the root agent"}
		}
		if err := s.putRoot(c, m); err != nil {
			m.Discard()
			return proto.TreeAgent{}, err
		}
		return proto.TreeAgent{AgentPath: proto.RootPath, TaskName: "root", Status: proto.TreeCompleted}, nil
	}
	s.mu.Lock()
	a, err := s.resolveLocked(c, target)
	if err == nil && a.status == proto.StatusClosed {
		err = &proto.Error{Code: proto.CodeClosed, Message: fmt.Sprintf("agent is shutdown: %s was closed; resume it first (subdash ctl resume %s)", a.path, a.path)}
	}
	from := s.pathOfLocked(c)
	s.mu.Unlock()
	if err == nil && followup {
		err = s.deliver(ctx, a, m)
	} else if err == nil {
		err = s.put(a, m, false, from)
	}
	if err != nil {
		m.Discard()
		return proto.TreeAgent{}, err
	}
	return s.treeAgent(a), nil
}

// errSelfInterrupt refuses an interrupt of the agent whose submission
// asks for it (Memo's text, SPEC §14).
var errSelfInterrupt = &proto.Error{Code: proto.CodeInvalid, Message: "an agent cannot interrupt itself"}

// InterruptAgent is interrupt_agent of the multi-agent family (SPEC §14):
// it interrupts target's running submission (Interrupt; its held messages
// stay) and answers the agent with its status before; an idle agent is
// left as it is. Errors (Memo's): "agent not found: <target>"; "root is
// not a spawned agent"; "an agent cannot interrupt itself".
func (s *Supervisor) InterruptAgent(ctx context.Context, target string) (proto.TreeAgent, error) {
	c := proto.CallerOf(ctx)
	if strings.TrimSpace(target) == proto.RootPath {
		return proto.TreeAgent{}, &proto.Error{Code: proto.CodeInvalid, Message: "root is not a spawned agent"}
	}
	s.mu.Lock()
	a, err := s.resolveLocked(c, target)
	if err == nil && a.id == c.AgentID {
		err = errSelfInterrupt
	}
	var before proto.TreeAgent
	if err == nil {
		before = s.treeAgentLocked(a)
	}
	s.mu.Unlock()
	if err != nil {
		return proto.TreeAgent{}, err
	}
	if _, err := s.Interrupt(ctx, a.id); err != nil && proto.CodeOf(err) != proto.CodeNotRunning {
		return proto.TreeAgent{}, err
	}
	return before, nil
}

// ListTree is list_agents of the multi-agent family (SPEC §14): the
// agents at or below pathPrefix (absolute, or relative to the caller's
// path; "" for the caller's own), the root excluded, by path.
func (s *Supervisor) ListTree(ctx context.Context, pathPrefix string) (proto.TreeList, error) {
	c := proto.CallerOf(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := s.pathOfLocked(c)
	if p := strings.TrimSpace(pathPrefix); strings.HasPrefix(p, "/") {
		prefix = p
	} else if p != "" {
		prefix = proto.JoinPath(prefix, p)
	}
	out := proto.TreeList{Agents: []proto.TreeAgent{}}
	for _, a := range s.order {
		if proto.Within(a.path, prefix) {
			out.Agents = append(out.Agents, s.treeAgentLocked(a))
		}
	}
	slices.SortStableFunc(out.Agents, func(x, y proto.TreeAgent) int { return comparePaths(x.AgentPath, y.AgentPath) })
	return out, nil
}

// comparePaths orders paths as Memo's list does (localeCompare): letters
// before their case, then by code point.
func comparePaths(x, y string) int {
	if c := strings.Compare(strings.ToLower(x), strings.ToLower(y)); c != 0 {
		return c
	}
	return strings.Compare(y, x) // lower case first, as localeCompare
}

// CloseMany closes the agents req selects (SPEC §3 close): every agent
// not closed yet (All), every agent of a status, or the listed targets (as
// Close takes them), each with its descendants as Close closes them, and
// terminates every running submission among them at once, one grace
// period for all, before it returns. An agent selected under another
// selected one is closed by that one's close, so resuming the upper one
// reopens it. Closed lists every agent the call closed, the selected ones
// in the order given (else oldest first), each subtree deepest first;
// selecting nothing is not an error.
// Errors: req.Check's; "agent not found: <target>" for a listed target,
// and nothing is closed then.
func (s *Supervisor) CloseMany(ctx context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error) {
	if err := req.Check(); err != nil {
		return proto.CloseManyResult{}, err
	}
	c := proto.CallerOf(ctx)
	var picked []*agent
	first := true
	trees, unlock, err := s.lockTrees(func() ([]*agent, error) {
		if !first { // the same agents, those still there
			return slices.DeleteFunc(slices.Clone(picked), func(a *agent) bool { return s.agents[a.id] != a }), nil
		}
		first = false
		var err error
		picked, err = s.pickLocked(c, req)
		return picked, err
	})
	if err != nil {
		return proto.CloseManyResult{}, err
	}
	defer unlock()
	res := proto.CloseManyResult{Closed: []string{}}
	var closed []closing
	roots := make([]*agent, 0, len(trees))
	s.mu.Lock()
	now := time.Now()
	for _, tree := range trees {
		roots = append(roots, tree[len(tree)-1])
		closed = append(closed, s.closeTreeLocked(c, tree, now)...)
	}
	s.mu.Unlock()
	for _, cl := range closed {
		res.Closed = append(res.Closed, cl.a.id)
		res.DroppedQueued = res.DroppedQueued || cl.msgs
	}
	s.endCloses(closed, roots)
	return res, nil
}

// pickLocked returns the agents req selects (listed in their order, else
// oldest first), without those
// under another selected agent (its close takes them). Call with s.mu
// held.
func (s *Supervisor) pickLocked(c proto.Caller, req proto.CloseManyRequest) ([]*agent, error) {
	var sel []*agent
	switch {
	case len(req.AgentIDs) > 0:
		for _, target := range req.AgentIDs {
			a, err := s.resolveLocked(c, target)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(sel, a) {
				sel = append(sel, a)
			}
		}
	default:
		for _, a := range s.order {
			if req.All && a.status != proto.StatusClosed || a.status == req.Status {
				sel = append(sel, a)
			}
		}
	}
	in := make(map[string]bool, len(sel))
	for _, a := range sel {
		in[a.id] = true
	}
	return slices.DeleteFunc(sel, func(a *agent) bool {
		for p := s.agents[a.parentID]; p != nil; p = s.agents[p.parentID] {
			if in[p.id] {
				return true
			}
		}
		return false
	}), nil
}

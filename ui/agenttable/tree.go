package agenttable

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// order is the table's rows: which agent each row shows and how the tree
// draws it, where each agent's row is, and what the rows were built from
// (to tell whether a change touches them).
type order struct {
	rows  []row
	index map[string]int32 // agent id → index in agents
	rowOf []int32          // per agent: its row, -1 when it has none
	// parent is per agent the index of its parent, -1 for a child of the
	// root (or of an agent not in the snapshot); kids counts its children.
	// Both nil without the tree.
	parent, kids []int32
	parentID     []string // per agent: the ParentID the rows were built with
	matched      []bool   // per agent: the filter's verdict the rows were built with; nil without a filter
	// cat is per agent the category a folded row counts it in (catRunning,
	// …), 0 for an agent no fold hides; nil when nothing is folded.
	cat    []uint8
	named  bool // an agent has a task name: the ID column joins the names
	nested bool // an agent has a parent in the table, or inner rows
	// usage: an agent is of a preset that reports usage, or reported
	// some (the USAGE column); changes: an agent's work tree is tracked
	// (the ± column); nameW: the widest name cell of the rows (measure).
	usage, changes bool
	nameW          int
	// innerN is per agent how many inner rows it has, isig what they were
	// built from (inner.go); both nil without inner agents shown.
	innerN []int32
	isig   []innerSig
	// hosts are the hosts of a table of several hosts (SetHosts), nil
	// for one host; hostBelow counts each host's agents for its row.
	hosts     *hostIndex
	hostBelow []Below
}

// row is one row of the table.
type row struct {
	agent int32 // index in agents; -1 for a host's row
	// host is, for a host's row (hosts.go), its index in the hosts plus
	// one; 0 for every other row.
	host  int32
	depth int32  // 0 for a child of the root
	last  uint64 // bit d: the agent's ancestor at depth d (the agent at its own) is the last sibling shown
	// hidden is how many descendants a fold hides (0: not folded), below
	// what they are.
	hidden int32
	below  Below
	// context marks an ancestor shown only because a filter matched
	// below it; matches counts the matches below it.
	context bool
	matches int32
	// inner is, for an inner agent's row (inner.go), its index in the
	// agent's InnerAgents plus one; 0 for the agent's own row. up is an
	// inner row's parent row (the agent's, or the inner agent that
	// started it).
	inner int32
	up    int32
}

// Below counts the agents of a folded subtree (its root excluded) by what
// they are, each once: running (stopping too), needing you, then by final
// status.
type Below struct {
	Agents, Running, NeedsYou, Errored, Completed, Closed int
	Inner                                                 int // inner agents' rows (SPEC §8), not agents of subdash
}

// Categories of Below, as kept in order.cat (0: not counted).
const (
	catRunning uint8 = iota + 1
	catNeedsYou
	catErrored
	catCompleted
	catClosed
)

func category(a *proto.AgentInfo) uint8 {
	switch {
	case a.Running():
		return catRunning
	case a.NeedsYou != nil:
		return catNeedsYou
	case a.Status == proto.StatusErrored:
		return catErrored
	case a.Status == proto.StatusClosed:
		return catClosed
	}
	return catCompleted
}

func (b *Below) add(c uint8) {
	b.Agents++
	switch c {
	case catRunning:
		b.Running++
	case catNeedsYou:
		b.NeedsYou++
	case catErrored:
		b.Errored++
	case catClosed:
		b.Closed++
	default:
		b.Completed++
	}
}

// String says what a folded subtree holds, e.g. "3 agents: 2 running, 1
// needs you" (SPEC §14).
func (b Below) String() string {
	parts := make([]string, 0, 5)
	for _, p := range []struct {
		n    int
		word string
	}{{b.Running, "running"}, {b.NeedsYou, "needs you"}, {b.Errored, "errored"}, {b.Completed, "completed"}, {b.Closed, "closed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	noun := "agents"
	if b.Agents == 1 {
		noun = "agent"
	}
	inner := ""
	switch {
	case b.Inner == 1:
		inner = "1 inner agent"
	case b.Inner > 1:
		inner = fmt.Sprintf("%d inner agents", b.Inner)
	}
	if b.Agents == 0 {
		return inner
	}
	if inner != "" {
		inner = "; " + inner
	}
	return fmt.Sprintf("%d %s: %s%s", b.Agents, noun, strings.Join(parts, ", "), inner)
}

// build lays the agents out: with tree, each agent under its parent in
// the order the agents came (oldest first), a folded agent's descendants
// counted in its row; with match, only the matches and their ancestors
// (folds do not apply then: every match shows). With inner, each
// agent's inner agents follow its row (inner.go). Cost: O(agents + inner
// agents).
func build(agents []proto.AgentInfo, match []bool, tree, inner bool, folded map[string]bool, hosts *hostIndex) order {
	n := len(agents)
	o := order{index: make(map[string]int32, n), rowOf: make([]int32, n), rows: make([]row, 0, n), hosts: hosts}
	for i := range agents {
		a := &agents[i]
		o.index[a.AgentID] = int32(i)
		o.rowOf[i] = -1
		o.named = o.named || tree && a.TaskName != ""
		o.usage = o.usage || hasUsage(a)
		o.changes = o.changes || a.Changes != nil
	}
	if match != nil {
		o.matched = append([]bool(nil), match...)
	}
	if inner {
		o.sizeInner(agents)
	}
	shows := func(i int32) bool { return match == nil || match[i] }
	if !tree && hosts == nil {
		for i := range agents {
			if shows(int32(i)) {
				o.add(row{agent: int32(i)})
				o.addInner(agents, int32(i), 0, 0, false)
			}
		}
		o.measure(agents, tree)
		return o
	}
	if tree {
		o.link(agents)
	} else { // a flat table under host rows: no agent has a parent
		o.parent, o.kids = make([]int32, n), make([]int32, n)
		for i := range o.parent {
			o.parent[i] = -1
		}
	}
	// first[p] and next[i] list each agent's children in the agents'
	// order; p == n is the root.
	first, next, tail := make([]int32, n+1), make([]int32, n), make([]int32, n+1)
	for i := range first {
		first[i], tail[i] = -1, -1
	}
	for i := range agents {
		p := o.parent[i]
		if p < 0 {
			p = int32(n)
		} else {
			o.kids[p]++
			o.nested = true
		}
		next[i] = -1
		if tail[p] < 0 {
			first[p] = int32(i)
		} else {
			next[tail[p]] = int32(i)
		}
		tail[p] = int32(i)
	}
	// Under a filter, sub[i] is the matches in i's subtree, itself included.
	var sub []int32
	if match != nil {
		sub = make([]int32, n)
		var count func(i int32) int32
		count = func(i int32) int32 {
			c := int32(0)
			if match[i] {
				c = 1
			}
			for k := first[i]; k >= 0; k = next[k] {
				c += count(k)
			}
			sub[i] = c
			return c
		}
		for r := first[n]; r >= 0; r = next[r] {
			count(r)
		}
	}
	shown := func(k int32) int32 { // k or its first later sibling that shows
		for ; k >= 0 && sub != nil && sub[k] == 0; k = next[k] {
		}
		return k
	}
	var hide func(i int32, r *row)
	hide = func(i int32, r *row) {
		for k := first[i]; k >= 0; k = next[k] {
			r.hidden++
			o.cat[k] = category(&agents[k])
			r.below.add(o.cat[k])
			r.hidden += o.inners(k)
			r.below.Inner += int(o.inners(k))
			hide(k, r)
		}
	}
	var walk func(i, depth int32, last uint64)
	walk = func(i, depth int32, last uint64) {
		r := row{agent: i, depth: depth, last: last}
		if match != nil {
			r.context = !match[i]
			r.matches = sub[i]
			if match[i] {
				r.matches--
			}
		}
		if match == nil && (first[i] >= 0 || o.inners(i) > 0) && folded[agents[i].AgentID] {
			if o.cat == nil {
				o.cat = make([]uint8, n)
			}
			r.hidden, r.below.Inner = o.inners(i), int(o.inners(i))
			hide(i, &r)
			o.add(r)
			return
		}
		o.add(r)
		if !r.context {
			o.addInner(agents, i, depth, last, shown(first[i]) >= 0)
		}
		for k := shown(first[i]); k >= 0; {
			after := shown(next[k])
			bits := last
			if after < 0 && depth+1 < 64 {
				bits |= 1 << (depth + 1)
			}
			walk(k, depth+1, bits)
			k = after
		}
	}
	if hosts == nil {
		for r := shown(first[n]); r >= 0; r = shown(next[r]) {
			walk(r, 0, 0)
		}
	} else {
		o.byHost(agents, first[n], next, sub, folded, hide, walk)
	}
	o.measure(agents, tree)
	return o
}

// link finds each agent's parent (o.parent, o.parentID, o.kids sized): the
// agent its ParentID names when that agent is in the snapshot, else the
// root. A cycle of parents (which no host makes) is cut where it is
// found, so every agent has a row.
func (o *order) link(agents []proto.AgentInfo) {
	n := len(agents)
	o.parent, o.kids, o.parentID = make([]int32, n), make([]int32, n), make([]string, n)
	for i := range agents {
		o.parentID[i] = agents[i].ParentID
		o.parent[i] = -1
		if j, ok := o.index[agents[i].ParentID]; ok && agents[i].ParentID != "" && int(j) != i {
			o.parent[i] = j
		}
	}
	const (
		unknown = iota
		onPath
		done
	)
	state := make([]uint8, n)
	path := make([]int32, 0, 8)
	for i := range agents {
		path = path[:0]
		for k := int32(i); k >= 0 && state[k] != done; k = o.parent[k] {
			if state[k] == onPath { // k's parents lead back to k
				o.parent[k] = -1
				break
			}
			state[k] = onPath
			path = append(path, k)
		}
		for _, k := range path {
			state[k] = done
		}
	}
}

// hasUsage reports whether agent a calls for the USAGE column: its preset
// reports tokens and cost (a transcript), or it reported some.
func hasUsage(a *proto.AgentInfo) bool { return a.Structured || a.Usage != (proto.Usage{}) }

// measure sets o.nameW, the widest name cell of o's rows (nameCell).
// Cost: O(rows), at each build only.
func (o *order) measure(agents []proto.AgentInfo, tree bool) {
	o.nameW = 0
	for _, r := range o.rows {
		if r.host > 0 {
			o.nameW = max(o.nameW, cells.Width(o.hosts.list[r.host-1].Name+foldCount(r.hidden)))
			continue
		}
		o.nameW = max(o.nameW, cells.Width(nameCell(&agents[r.agent], r, tree)))
	}
}

// nameCell is what the AGENT column shows of row r of agent a: the tree's
// glyphs, the task name (tree) or short id, and what a fold hides ("
// +3"); for an inner row, SymInner and its description.
func nameCell(a *proto.AgentInfo, r row, tree bool) string {
	g := glyphs(r.depth, r.last)
	if r.inner > 0 {
		if int(r.inner) > len(a.InnerAgents) {
			return g + SymInner
		}
		return g + SymInner + " " + InnerName(a.InnerAgents[r.inner-1])
	}
	task := ""
	if tree {
		task = termtext.OneLine(cells.Head(a.TaskName, 256), 0)
	}
	return g + name(task, a.AgentID) + foldCount(r.hidden)
}

// foldCount is what a folded row adds to its name: " +3", the rows it
// hides; "" when not folded.
func foldCount(hidden int32) string {
	if hidden <= 0 {
		return ""
	}
	return " +" + strconv.Itoa(int(hidden))
}

func (o *order) add(r row) {
	if r.host == 0 {
		o.rowOf[r.agent] = int32(len(o.rows))
	}
	o.rows = append(o.rows, r)
}

// pos returns the row of agent id.
func (o order) pos(id string) (int, bool) {
	if i, ok := o.index[id]; ok && o.rowOf[i] >= 0 {
		return int(o.rowOf[i]), true
	}
	return 0, false
}

// ancestors returns the ids of agent id's ancestors, nearest first.
func (o order) ancestors(id string, agents []proto.AgentInfo) []string {
	i, ok := o.index[id]
	if !ok || o.parent == nil {
		return nil
	}
	var out []string
	for p := o.parent[i]; p >= 0; p = o.parent[p] {
		out = append(out, agents[p].AgentID)
	}
	return out
}

// touches reports whether agents[i], changed in place, changes the rows
// themselves: its filter verdict, its parent, a first task name, or what
// a folded row counts it as.
func (o order) touches(i int, agents []proto.AgentInfo, match []bool) bool {
	if i < 0 || i >= len(o.rowOf) || (match == nil) != (o.matched == nil) {
		return true
	}
	a := &agents[i]
	switch {
	case o.matched != nil && match[i] != o.matched[i]:
		return true
	case o.parentID != nil && a.ParentID != o.parentID[i]:
		return true
	case o.parentID != nil && !o.named && a.TaskName != "":
		return true
	case o.isig != nil && sigOf(a) != o.isig[i]:
		return true
	case !o.usage && hasUsage(a), !o.changes && a.Changes != nil:
		return true // a column comes
	}
	return o.cat != nil && o.cat[i] != 0 && o.cat[i] != category(a)
}

// rebuild lays the rows out again, keeping the row of sel (an agent's id,
// or a host's key: selectedKey) selected: its row, else (a fold hides it)
// its nearest shown ancestor's, its host's, else the row at its place.
func (m *Model) rebuild(sel string) { m.rebuildAt(sel, m.selectedTask()) }

// rebuildAt is rebuild keeping the inner agent of task id task (of agent
// sel) selected when it still has a row.
func (m *Model) rebuildAt(sel, task string) {
	m.order = build(m.agents, m.match, m.tree, m.inner, m.folded, m.hosts)
	if sel != "" && m.selectKey(sel) {
		m.selectTask(task)
		return
	}
	for _, anc := range m.order.ancestors(sel, m.agents) {
		if m.Select(anc) {
			return
		}
	}
	if i, ok := m.order.index[sel]; ok && m.hosts != nil && m.selectKey(hostKey(m.agents[i].Host)) {
		return
	}
	m.cursor = min(m.cursor, max(m.Len()-1, 0))
	m.clampOffset()
}

// setFold folds or unfolds agent id's subtree, in a map of the model's
// own (an earlier copy of the model keeps its folds).
func (m *Model) setFold(id string, fold bool) {
	m.folded = maps.Clone(m.folded)
	if m.folded == nil {
		m.folded = map[string]bool{}
	}
	if fold {
		m.folded[id] = true
	} else {
		delete(m.folded, id)
	}
}

// name is how the table names an agent: its task name (cleaned), else
// its short id.
func name(task, id string) string {
	if task != "" {
		return task
	}
	return termtext.ShortID(id)
}

// foldKey folds or unfolds for a fold key k, or moves to a parent or a
// child (FoldOrParent, UnfoldOrChild), and says what it did where that is
// not on screen.
func (m *Model) foldKey(k tea.KeyPressMsg) tea.Cmd {
	km := m.KeyMap
	switch {
	case !m.tree && m.hosts == nil:
		return says("no tree to fold: this host keeps no parents (an older subdash)")
	case m.match != nil:
		return says("the filter shows every match and its ancestors: clear it (F, ctrl+u, enter) to fold")
	case !m.order.nested:
		return says("nothing to fold: no agent has children")
	case key.Matches(k, km.FoldAll):
		if len(m.folded) > 0 {
			m.folded = nil
			m.rebuild(m.selectedKey())
			return says("unfolded every subtree")
		}
		all := map[string]bool{}
		for i, n := range m.order.kids {
			if n+m.order.inners(int32(i)) > 0 {
				all[m.agents[i].AgentID] = true
			}
		}
		if m.hosts != nil {
			for h, b := range m.order.hostBelow {
				if b.Agents > 0 {
					all[hostKey(m.hosts.list[h].Name)] = true
				}
			}
		}
		m.folded = all
		m.rebuild(m.selectedKey())
		return says(fmt.Sprintf("folded %d subtrees; %s unfolds them all", len(all), km.FoldAll.Help().Key))
	}
	if m.cursor >= m.Len() {
		return nil
	}
	r := m.order.rows[m.cursor]
	if r.host > 0 {
		return m.hostFoldKey(k, r)
	}
	i := r.agent
	id, kids, parent := m.agents[i].AgentID, m.order.kids[i]+m.order.inners(i), m.order.parent[i]
	if r.inner > 0 {
		return m.innerFoldKey(k, r)
	}
	switch {
	case key.Matches(k, km.Fold):
		if kids == 0 { // as vim's za inside a fold: the enclosing one
			if parent < 0 && m.hosts != nil {
				m.setFold(hostKey(m.agents[i].Host), true)
				m.rebuild(m.selectedKey())
				return nil
			}
			if parent < 0 {
				return says(name(termtext.OneLine(m.agents[i].TaskName, 64), id) + " has no children to fold")
			}
			id = m.agents[parent].AgentID
		}
		m.setFold(id, !m.folded[id])
		m.rebuild(m.selectedKey())
	case key.Matches(k, km.FoldOrParent):
		switch {
		case kids > 0 && !m.folded[id]:
			m.setFold(id, true)
			m.rebuild(id)
		case parent >= 0:
			m.Select(m.agents[parent].AgentID)
		case m.hosts != nil:
			m.SelectHost(m.agents[i].Host)
		}
	case key.Matches(k, km.UnfoldOrChild):
		if m.folded[id] {
			m.setFold(id, false)
			m.rebuild(id)
		} else if kids > 0 {
			m.MoveDown() // a child's row follows its parent's
		}
	}
	return nil
}

// hostFoldKey is foldKey on host row r: z folds or unfolds its agents, ←
// folds them, → unfolds them, or selects its first agent.
func (m *Model) hostFoldKey(k tea.KeyPressMsg, r row) tea.Cmd {
	km := m.KeyMap
	h := m.hosts.list[r.host-1]
	folded, has := m.folded[hostKey(h.Name)], m.order.hostBelow[r.host-1].Agents > 0
	switch {
	case !has && key.Matches(k, km.Fold, km.FoldOrParent, km.UnfoldOrChild):
		return says("host " + h.Name + " has no agents to fold")
	case key.Matches(k, km.Fold):
		m.foldHost(r, !folded)
	case key.Matches(k, km.FoldOrParent):
		m.foldHost(r, true)
	case key.Matches(k, km.UnfoldOrChild) && folded:
		m.foldHost(r, false)
	case key.Matches(k, km.UnfoldOrChild):
		m.MoveDown()
	}
	return nil
}

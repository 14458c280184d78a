package agenttable

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/ui/internal/cells"
)

// Inner agents (SPEC §8 "Inner agents"): the subagents an agent CLI
// started inside the agent's latest submission are child rows of the
// agent, before its child agents, nested by their parent_task_id, muted
// and marked SymInner and "inner". They are not agents of subdash: the
// cursor rests on them (a row the user sees is a row j/k visits, and the
// log pane shows the agent's transcript, where they ran), but
// SelectedInner tells the dashboard to refuse an agent's operations on
// them. A fold of the agent hides them too.

// SymInner marks an inner agent's row, before its description.
const SymInner = "◇"

// innerSig is what an agent's inner rows were built from: a change of
// any part rebuilds the order (Changed).
type innerSig struct {
	seq      int    // the latest submission's
	n        int    // len(InnerAgents)
	parented int    // how many have a ParentTaskID (filled late: SPEC §8)
	first    string // the first TaskID (the list drops its oldest past 200)
}

func sigOf(a *proto.AgentInfo) innerSig {
	s := innerSig{seq: latestSeq(a), n: len(a.InnerAgents)}
	if s.n > 0 {
		s.first = a.InnerAgents[0].TaskID
	}
	for i := range a.InnerAgents {
		if a.InnerAgents[i].ParentTaskID != "" {
			s.parented++
		}
	}
	return s
}

func latestSeq(a *proto.AgentInfo) int {
	if n := len(a.Submissions); n > 0 {
		return a.Submissions[n-1].Seq
	}
	return 0
}

// innerOf returns the indexes in a.InnerAgents of the inner agents its
// rows show (those of its latest submission), oldest first.
func innerOf(a *proto.AgentInfo) []int32 {
	seq := latestSeq(a)
	var out []int32
	for i := range a.InnerAgents {
		if a.InnerAgents[i].SubmissionSeq == seq {
			out = append(out, int32(i))
		}
	}
	return out
}

// sizeInner sizes the per-agent inner fields of o (inner on).
func (o *order) sizeInner(agents []proto.AgentInfo) {
	o.innerN, o.isig = make([]int32, len(agents)), make([]innerSig, len(agents))
	for i := range agents {
		o.isig[i] = sigOf(&agents[i])
		if len(agents[i].InnerAgents) > 0 {
			n := int32(len(innerOf(&agents[i])))
			o.innerN[i] = n
			o.nested = o.nested || n > 0
		}
	}
}

// inners returns how many inner rows agent i has (0 with inner off).
func (o *order) inners(i int32) int32 {
	if o.innerN == nil {
		return 0
	}
	return o.innerN[i]
}

// addInner adds the inner rows of agent i (whose row is the last added, at
// depth depth with last bits last) below it; more says that rows of child
// agents follow them, so none of them is the last sibling.
func (o *order) addInner(agents []proto.AgentInfo, i, depth int32, last uint64, more bool) {
	if o.inners(i) == 0 {
		return
	}
	a := &agents[i]
	idx := innerOf(a)
	at := make(map[string]int32, len(idx)) // task id → index in idx
	for k, j := range idx {
		at[a.InnerAgents[j].TaskID] = int32(k)
	}
	root := int32(len(idx))
	par := make([]int32, len(idx))
	for k, j := range idx {
		par[k] = root
		if q, ok := at[a.InnerAgents[j].ParentTaskID]; ok && a.InnerAgents[j].ParentTaskID != "" && int(q) != k {
			par[k] = q
		}
	}
	// A cycle of parent_task_ids (no CLI writes one) is cut where it is
	// found, as link cuts one of agents: each inner agent shows once.
	state := make([]uint8, len(idx)) // 0 unknown, 1 on the path, 2 done
	var path []int32
	for k := range idx {
		path = path[:0]
		for c := int32(k); c != root && state[c] != 2; c = par[c] {
			if state[c] == 1 {
				par[c] = root
				break
			}
			state[c] = 1
			path = append(path, c)
		}
		for _, c := range path {
			state[c] = 2
		}
	}
	kids := make([][]int32, len(idx)+1) // per inner agent, and the agent's own last
	for k := range idx {
		kids[par[k]] = append(kids[par[k]], int32(k))
	}
	var walk func(p int32, up int32, d int32, bits uint64, more bool)
	walk = func(p, up, d int32, bits uint64, more bool) {
		for n, k := range kids[p] {
			b := bits
			if n == len(kids[p])-1 && !more && d < 64 {
				b |= 1 << d
			}
			o.rows = append(o.rows, row{agent: i, inner: idx[k] + 1, depth: d, last: b, up: up})
			walk(k, int32(len(o.rows)-1), d+1, b, false)
		}
	}
	walk(root, int32(len(o.rows)-1), depth+1, last, more)
}

// SelectedInner returns the inner agent the selected row shows and its
// agent's id; ok is false when an agent's row is selected.
func (m Model) SelectedInner() (inner proto.InnerAgent, agentID string, ok bool) {
	if m.cursor >= len(m.order.rows) {
		return proto.InnerAgent{}, "", false
	}
	r := m.order.rows[m.cursor]
	if r.inner == 0 {
		return proto.InnerAgent{}, "", false
	}
	a := &m.agents[r.agent]
	if int(r.inner) > len(a.InnerAgents) {
		return proto.InnerAgent{}, "", false
	}
	return a.InnerAgents[r.inner-1], a.AgentID, true
}

// selectedTask returns the task id of the inner agent the selected row
// shows, "" on an agent's row.
func (m Model) selectedTask() string {
	if m.cursor >= len(m.order.rows) {
		return ""
	}
	r := m.order.rows[m.cursor]
	if r.inner == 0 || int(r.agent) >= len(m.agents) || int(r.inner) > len(m.agents[r.agent].InnerAgents) {
		return ""
	}
	return m.agents[r.agent].InnerAgents[r.inner-1].TaskID
}

// selectTask moves the selection from an agent's row to its inner row
// of task id task, when it has one (the rows were laid out again: an
// inner agent started, got its parent, a fold changed).
func (m *Model) selectTask(task string) {
	if task == "" || m.cursor >= len(m.order.rows) {
		return
	}
	i := m.order.rows[m.cursor].agent
	for k := m.cursor + 1; k < len(m.order.rows) && m.order.rows[k].agent == i && m.order.rows[k].inner > 0; k++ {
		if in := m.order.rows[k].inner; int(in) <= len(m.agents[i].InnerAgents) && m.agents[i].InnerAgents[in-1].TaskID == task {
			m.cursor = k
			m.clampOffset()
			return
		}
	}
}

// InnerNote is what the dashboard says when a key that acts on an agent
// (send, close, resume, forget, steer, interrupt, cancel queue) meets
// inner agent in of agent (named as the dashboard names it): subdash
// cannot send to it or close it (SPEC §8).
func InnerNote(in proto.InnerAgent, agent string) string {
	d := InnerName(in)
	if in.Status == proto.InnerRunning {
		return fmt.Sprintf("%s is an inner agent of %s: interrupt %s to end it", d, agent, agent)
	}
	return fmt.Sprintf("%s is an inner agent of %s and has ended (%s): select %s to act on it", d, agent, in.Status, agent)
}

// InnerName is an inner agent's description, one clean line, else its
// task id.
func InnerName(in proto.InnerAgent) string {
	if d := termtext.OneLine(cells.Head(in.Description, 256), 0); d != "" {
		return d
	}
	return termtext.OneLine(cells.Head(in.TaskID, 64), 0)
}

// InnerStatusText is the status cell of an inner agent, one of the
// table's five words: "● running" (with the spinner frame), "✓
// completed", "✗ errored" (interrupted or failed: InnerMessage says
// which), "? unknown".
func InnerStatusText(in proto.InnerAgent, frame int) string {
	switch in.Status {
	case proto.InnerRunning:
		return Frames[frame%len(Frames)] + " running"
	case proto.InnerCompleted:
		return SymCompleted + " completed"
	case "":
		return "? unknown"
	}
	return SymErrored + " errored"
}

// InnerElapsed is how long inner agent in ran by now: since its start
// while it runs, else what the CLI reported (its end less its start when
// it reported none).
func InnerElapsed(in proto.InnerAgent, now time.Time) time.Duration {
	switch {
	case in.Status == proto.InnerRunning && !in.StartedAt.IsZero():
		return max(now.Sub(in.StartedAt.Time), 0)
	case in.ElapsedMS > 0:
		return time.Duration(in.ElapsedMS) * time.Millisecond
	case !in.EndedAt.IsZero() && !in.StartedAt.IsZero():
		return max(in.EndedAt.Sub(in.StartedAt.Time), 0)
	}
	return 0
}

// InnerMessage is the NOW cell of an inner agent: "inner · → Bash · 3
// tools · 12.3k tok" while it runs, "inner · 3 tools, last Bash ·
// <summary>" after ("inner interrupted · …" when it did not complete);
// the tokens where the CLI reported them.
func InnerMessage(in proto.InnerAgent) string {
	parts := []string{"inner"}
	if st := in.Status; st != proto.InnerRunning && st != proto.InnerCompleted && st != "" {
		parts[0] += " " + termtext.OneLine(cells.Head(st, 32), 0) // how it ended: the status cell says errored
	}
	if in.Status == proto.InnerRunning && in.LastTool != "" {
		parts = append(parts, "→ "+termtext.OneLine(cells.Head(in.LastTool, 64), 0))
	}
	switch {
	case in.ToolCount == 1:
		parts = append(parts, "1 tool")
	case in.ToolCount > 1:
		parts = append(parts, fmt.Sprintf("%d tools", in.ToolCount))
	}
	if in.Status != proto.InnerRunning && in.LastTool != "" && in.ToolCount > 0 {
		parts[len(parts)-1] += ", last " + termtext.OneLine(cells.Head(in.LastTool, 64), 0)
	}
	if in.Tokens > 0 { // not in USAGE: claude's is its latest request's size, not a sum (SPEC §8)
		parts = append(parts, transcript.Tokens(in.Tokens)+" tok")
	}
	if s := termtext.OneLine(cells.Head(in.Summary, 1024), 0); s != "" && s != InnerName(in) { // claude's is often the description
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// drawInner makes what row i, an inner agent's row, shows.
func (m Model) drawInner(i int, r row) drawn {
	a := &m.agents[r.agent]
	d := drawn{cursor: i == m.cursor, glyphs: glyphs(r.depth, r.last)}
	d.Inner = true
	if int(r.inner) > len(a.InnerAgents) { // the list changed under the order: drawn empty until it is rebuilt
		d.name = SymInner
		return d
	}
	in := a.InnerAgents[r.inner-1]
	d.Name = InnerName(in)
	d.name = SymInner + " " + d.Name
	d.Elapsed = InnerElapsed(in, m.now)
	d.status = InnerStatusText(in, m.frame)
	d.now = InnerMessage(in)
	return d
}

// innerFoldKey is foldKey on inner row r: z folds its agent (the
// enclosing fold, as on a child agent's row), ← selects its parent row,
// → its first inner child.
func (m *Model) innerFoldKey(k tea.KeyPressMsg, r row) tea.Cmd {
	km := m.KeyMap
	switch {
	case key.Matches(k, km.Fold):
		id := m.agents[r.agent].AgentID
		m.setFold(id, true)
		m.rebuild(id)
	case key.Matches(k, km.FoldOrParent):
		if r.up >= 0 && int(r.up) < len(m.order.rows) {
			m.cursor = int(r.up)
			m.clampOffset()
		}
	case key.Matches(k, km.UnfoldOrChild):
		if c := m.cursor + 1; c < len(m.order.rows) && m.order.rows[c].up == int32(m.cursor) && m.order.rows[c].inner > 0 {
			m.MoveDown()
		}
	}
	return nil
}

package agenttable

import (
	"maps"
	"strconv"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/ui/internal/cells"
)

// A table of several hosts (SPEC §9 "Several hosts"): each host has a row,
// before its agents' rows, which are its children in the tree. A host's
// row folds as an agent's subtree does (its key in folded is hostKey),
// and under a filter it shows, muted, when an agent of the host matches.
// The agents of a host that is lost stay as they were last seen, muted,
// their NOW led by "✗ host lost", their times stopped when it was lost
// and a running one's spinner still.

// Host is one host of a table of several hosts: its row names it and says
// Text after the name (its folder and machine), or, when Lost is not "",
// "✗ host lost: <Lost>". The agents whose AgentInfo.Host is Name are its.
type Host struct {
	Name   string    // unique among the hosts
	Text   string    // its folder and machine, one clean line
	Lost   string    // why it cannot be reached now, one clean line; "" while it answers
	LostAt time.Time // when it was lost
}

// hostIndex is the hosts of the table (SetHosts), nil for one host.
type hostIndex struct {
	list []Host
	at   map[string]int32 // name → index in list
}

// hostKey is the key of a host's row in Model.folded and for the
// selection: no agent id starts with a NUL.
func hostKey(name string) string { return "\x00host " + name }

// SetHosts gives the table the hosts of a dashboard of several hosts, in
// the order their rows are drawn (nil: one host, no host rows, the table
// as without them). The table keeps the slice until the next SetHosts.
// Cost: O(agents), the rows laid out again.
func (m *Model) SetHosts(hosts []Host) {
	sel := m.selectedKey()
	if hosts == nil {
		m.hosts = nil
	} else {
		h := &hostIndex{list: hosts, at: make(map[string]int32, len(hosts))}
		for i := range hosts {
			h.at[hosts[i].Name] = int32(i)
		}
		m.hosts = h
	}
	m.rebuild(sel)
}

// lost reports whether agent a's host is lost (SetHosts), and since when.
func (m Model) lost(a *proto.AgentInfo) (time.Time, bool) {
	if m.hosts == nil {
		return time.Time{}, false
	}
	i, ok := m.hosts.at[a.Host]
	if !ok || m.hosts.list[i].Lost == "" {
		return time.Time{}, false
	}
	return m.hosts.list[i].LostAt, true
}

// SelectedHost returns the host of the selected row: a host row's own,
// or the selected agent's (AgentInfo.Host); ok is false without hosts
// or rows. onRow says the host's own row is selected.
func (m Model) SelectedHost() (name string, onRow, ok bool) {
	if m.hosts == nil || m.cursor >= len(m.order.rows) {
		return "", false, false
	}
	if r := m.order.rows[m.cursor]; r.host > 0 {
		return m.hosts.list[r.host-1].Name, true, true
	}
	return m.agents[m.order.rows[m.cursor].agent].Host, false, true
}

// SelectFirstAgent selects the first agent's row, when a host's row is
// selected and an agent has a row: a dashboard of several hosts starts
// on an agent's log, not a host's.
func (m *Model) SelectFirstAgent() {
	if m.cursor < len(m.order.rows) && m.order.rows[m.cursor].host == 0 {
		return
	}
	for i, r := range m.order.rows {
		if r.host == 0 {
			m.cursor = i
			m.clampOffset()
			return
		}
	}
}

// SelectHost selects host name's row and reports whether it has one (a
// filter may hide it).
func (m *Model) SelectHost(name string) bool { return m.selectKey(hostKey(name)) }

// selectedKey is the key of the selected row for rebuild: its agent's id,
// or a host row's hostKey; "" without rows.
func (m Model) selectedKey() string {
	if m.cursor < len(m.order.rows) {
		if r := m.order.rows[m.cursor]; r.host > 0 {
			return hostKey(m.hosts.list[r.host-1].Name)
		}
	}
	return m.SelectedID()
}

// selectKey selects the row of key (selectedKey's) and reports whether
// it has one.
func (m *Model) selectKey(key string) bool {
	if m.hosts != nil {
		for i, r := range m.order.rows {
			if r.host > 0 && hostKey(m.hosts.list[r.host-1].Name) == key {
				m.cursor = i
				m.clampOffset()
				return true
			}
		}
	}
	return m.Select(key)
}

// byHost adds the rows of a table of several hosts to o: per host, its
// row, then its agents' subtrees one level down (walk), or, when folded,
// its row alone counting what it hides (hide). roots lists the agents
// without a parent (first, then next[i]); sub is, under a filter, the
// matches in each agent's subtree (a host shows when it has any). The
// agents of no host listed come last, at the top level. Every agent's
// category is kept (o.cat), so that a change of one rebuilds the order
// and its host's row counts anew. Cost: O(agents).
func (o *order) byHost(agents []proto.AgentInfo, roots int32, next []int32, sub []int32, folded map[string]bool,
	hide func(int32, *row), walk func(int32, int32, uint64)) {
	hs := o.hosts
	n := len(agents)
	o.cat = make([]uint8, n)
	o.hostBelow = make([]Below, len(hs.list))
	of := make([][]int32, len(hs.list)+1) // per host its roots shown; the last: those of no host
	for i := range agents {
		o.cat[i] = category(&agents[i])
		if h, ok := hs.at[agents[i].Host]; ok {
			o.hostBelow[h].add(o.cat[i])
		}
	}
	for r := roots; r >= 0; r = next[r] {
		if sub != nil && sub[r] == 0 {
			continue
		}
		h, ok := hs.at[agents[r].Host]
		if !ok {
			h = int32(len(hs.list))
		}
		of[h] = append(of[h], r)
	}
	o.nested = o.nested || n > 0
	kids := func(rs []int32, depth int32, last uint64) {
		for k, r := range rs {
			bits := last
			if k == len(rs)-1 && depth < 64 {
				bits |= 1 << depth
			}
			walk(r, depth, bits)
		}
	}
	for h := range hs.list {
		rs := of[h]
		hr := row{agent: -1, host: int32(h) + 1}
		if sub != nil {
			if len(rs) == 0 {
				continue // no match on this host
			}
			hr.context = true
			for _, r := range rs {
				hr.matches += sub[r]
			}
		}
		if sub == nil && folded[hostKey(hs.list[h].Name)] && len(rs) > 0 {
			for _, r := range rs {
				hr.hidden++
				hr.below.add(o.cat[r])
				hr.hidden += o.inners(r)
				hr.below.Inner += int(o.inners(r))
				hide(r, &hr)
			}
			o.add(hr)
			continue
		}
		o.add(hr)
		kids(rs, 1, 0)
	}
	kids(of[len(hs.list)], 0, 0)
}

// drawHost makes what row i, a host's row, shows: its name (and what a
// fold hides), then its folder and machine and what its agents are, or
// that it is lost.
func (m Model) drawHost(i int, r row) drawn {
	h := m.hosts.list[r.host-1]
	d := drawn{cursor: i == m.cursor, host: true, context: r.context, name: h.Name, fold: foldCount(r.hidden)}
	d.Name = h.Name
	switch {
	case h.Lost != "":
		d.now, d.hostLost = SymErrored+" host lost: "+h.Lost, true
	case r.context && r.matches == 1:
		d.now = h.Text + " · 1 match below"
	case r.context:
		d.now = h.Text + " · " + strconv.Itoa(int(r.matches)) + " matches below"
	default:
		d.now = h.Text + " · " + hostCount(m.order.hostBelow[r.host-1])
	}
	return d
}

// hostCount says what a host's agents are: "no agents yet", "3 agents: 2
// running, 1 completed".
func hostCount(b Below) string {
	if b.Agents == 0 {
		return "no agents yet"
	}
	return b.String()
}

// hostRow draws a host's row: the name in the header's ink, the rest
// muted (errored when the host is lost).
func (m Model) hostRow(l layout, d drawn) string {
	rest := max(m.width-markW-l.name-1, 0)
	if d.cursor {
		return m.inks.Selected.On(cells.Fit(mark(d)+d.nameCell(l.name)+" "+cells.Fit(d.now, rest), m.width))
	}
	ink := m.inks.Muted
	if d.hostLost {
		ink = m.inks.Errored
	}
	name := m.inks.Header
	if d.context {
		name = m.inks.Muted
	}
	return cells.Fit("   "+name.On(d.nameCell(l.name))+" "+ink.On(cells.Fit(d.now, rest)), m.width)
}

// foldHost folds or unfolds host row r's agents (fold: true folds, false
// unfolds).
func (m *Model) foldHost(r row, fold bool) {
	key := hostKey(m.hosts.list[r.host-1].Name)
	if m.folded[key] == fold {
		return
	}
	m.folded = maps.Clone(m.folded)
	if m.folded == nil {
		m.folded = map[string]bool{}
	}
	if fold {
		m.folded[key] = true
	} else {
		delete(m.folded, key)
	}
	m.rebuild(key)
}

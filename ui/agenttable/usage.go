package agenttable

import "github.com/subdash/subdash/supervisor/proto"

// SymSubtree marks a usage cell that sums an agent's subtree: its own
// and all its descendants' tokens and cost (SPEC §7).
const SymSubtree = "Σ"

// subtreeUsage returns per agent (indexed as m.agents) the usage of its
// subtree, itself included, for the agents with children in the tree;
// nil when the table draws no tree or no agent reported usage. One pass
// over the agents, climbing each one's ancestors (at most --max-depth):
// the View of a table with rows under parents, not per row.
func (m Model) subtreeUsage() []proto.Usage {
	if !m.tree || !m.order.nested || m.order.parent == nil {
		return nil
	}
	var sums []proto.Usage
	for i := range m.agents {
		u := m.agents[i].Usage
		if u == (proto.Usage{}) {
			continue
		}
		if sums == nil {
			sums = make([]proto.Usage, len(m.agents))
		}
		sums[i].Add(u)
		for p, hops := m.order.parent[i], 0; p >= 0 && hops < len(m.agents); p, hops = m.order.parent[p], hops+1 {
			sums[p].Add(u)
		}
	}
	return sums
}

// rollUp sets the usage cell of d, the row of agent i, to its subtree's
// sum marked SymSubtree when i has children and the sum is more than its
// own.
func (m Model) rollUp(d *drawn, i int32, sums []proto.Usage) {
	if sums == nil || m.order.kids[i] == 0 || sums[i] == m.agents[i].Usage {
		return
	}
	d.Usage = SymSubtree + " " + UsageCell(sums[i])
}

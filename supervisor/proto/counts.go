package proto

// Counts is how many agents of a snapshot are in each state that the
// dashboard's status line, its notes and its quit question say (SPEC §7,
// §11, §12). CountAgents makes it; it is the one count over the agents, so
// the status line and the question cannot disagree.
type Counts struct {
	// Running counts the agents whose submission may still be alive
	// (AgentInfo.Running: running, or stopping until its process group is
	// gone).
	Running int
	// Completed, Errored and Closed count the other agents by status.
	Completed, Errored, Closed int
	// NeedYou counts the agents that need you (Summary.NeedsYou set).
	NeedYou int
	// Restored counts the agents restored from an earlier run.
	Restored int
	// Failing counts the agents whose log file or journal could not be
	// written (Summary.Failure set).
	Failing int
	// Queued counts the agents with a queued message.
	Queued int
	// Approvals counts the pending approval requests of all agents.
	Approvals int
	// Stalled counts the agents marked stalled (Summary.StalledSince).
	Stalled int
	// Usage sums the tokens and cost of every agent (AgentInfo.Usage),
	// restored ones included.
	Usage Usage
	// RunCostUSD sums Summary.RunCostUSD: what the agents spent on this
	// host since it started (the fleet spend, but forgotten agents').
	RunCostUSD float64
	// RunningBy counts the running agents a client started, by
	// AgentInfo.Origin ("mcp", "ctl", "viewer", …) in the order of the
	// snapshot; the agents the host's own dashboard started are not in it.
	RunningBy []OriginCount
}

// OriginCount is how many running agents one client started.
type OriginCount struct {
	Origin string
	N      int
}

// CountAgents counts agents (a snapshot, oldest first). It reads the
// snapshot only.
func CountAgents(agents []AgentInfo) Counts {
	var c Counts
	for i := range agents {
		a := &agents[i] // a snapshot is large: not copied per agent
		if a.Running() {
			c.Running++
			if a.Origin != "" {
				c.addOrigin(a.Origin)
			}
		} else {
			switch a.Status {
			case StatusCompleted:
				c.Completed++
			case StatusErrored:
				c.Errored++
			case StatusClosed:
				c.Closed++
			}
		}
		if a.NeedsYou != nil {
			c.NeedYou++
		}
		if a.Restored {
			c.Restored++
		}
		if a.Failure != "" {
			c.Failing++
		}
		if a.QueuedMessage != "" {
			c.Queued++
		}
		c.Approvals += len(a.PendingApprovals)
		if a.StalledSince != nil {
			c.Stalled++
		}
		c.Usage.Add(a.Usage)
		c.RunCostUSD += a.RunCostUSD
	}
	return c
}

func (c *Counts) addOrigin(o string) {
	for i := range c.RunningBy {
		if c.RunningBy[i].Origin == o {
			c.RunningBy[i].N++
			return
		}
	}
	c.RunningBy = append(c.RunningBy, OriginCount{o, 1})
}

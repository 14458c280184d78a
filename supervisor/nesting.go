package supervisor

import "fmt"

// CheckNesting refuses a request that comes from one of this supervisor's
// own subagents when nesting is off (SPEC §2: subagents get
// MEMO_ENABLE_COLLAB_TOOLS=0 "so a subagent does not spawn subagents of its
// own" unless --allow-nested is given). pid is the requesting process, as
// the control socket's peer credentials report it; a process belongs to a
// subagent when its session (or process group) is that of a running
// submission, since every submission runs in a session of its own. That
// covers `subdash ctl` or `subdash mcp` run by an agent, and anything they
// start, whatever their environment says.
//
// It returns nil when nesting is allowed or pid is not inside a submission,
// and otherwise an *Error with CodeNested naming the agent.
func (s *Supervisor) CheckNesting(pid int) error {
	if s.cfg.AllowNested || pid <= 0 {
		return nil
	}
	_, pgrp, session, ok := procStat(pid)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.order {
		if r := a.running; r != nil && r.proc != nil && (r.proc.pgid == session || r.proc.pgid == pgrp) {
			return &Error{CodeNested, fmt.Sprintf(
				"agent %s may not start or instruct agents: subagents do not get subagents of their own; start subdash with --allow-nested to allow it",
				a.id)}
		}
	}
	return nil
}

package supervisor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// CheckNesting refuses a request that comes from one of this supervisor's
// own subagents when nesting is off (SPEC §2: subagents get
// MEMO_ENABLE_COLLAB_TOOLS=0 "so a subagent does not spawn subagents of its
// own" unless --allow-nested is given). pid is the requesting process, as
// the control socket's peer credentials report it. It belongs to a
// subagent when it is in a running submission's cgroup (SPEC §4: where
// submissions run in cgroups of their own, which no process of theirs
// leaves), or when it, or one of its ancestors, is in the session or
// process group of a running submission (every submission runs in a
// session of its own; the ancestors catch a process that left it with
// setsid), or when its environment holds a running submission's
// SUBDASH_SUBMISSION_ID. That covers `subdash ctl` or `subdash mcp` run
// by an agent, and anything they start; without cgroups a process that
// left both its session and its environment (`env -i setsid -f`) is not
// found: there the rule is advisory.
//
// It returns nil when nesting is allowed or pid is not inside a submission,
// and otherwise an *Error with CodeNested naming the agent.
func (s *Supervisor) CheckNesting(pid int) error {
	if s.cfg.AllowNested || pid <= 0 {
		return nil
	}
	if a := s.agentOfProcess(pid); a != "" {
		return errNested(a)
	}
	return nil
}

// CallerAgent returns the id of the agent whose running submission holds
// process pid (as CheckNesting finds it), "" when none does: the parent
// of what pid spawns and the start of its relative targets (SPEC §14).
func (s *Supervisor) CallerAgent(pid int) string {
	if pid <= 0 {
		return ""
	}
	return s.agentOfProcess(pid)
}

// agentOfProcess returns the agent whose running submission's session or
// process group holds pid or one of its ancestors, or whose
// SUBDASH_SUBMISSION_ID pid inherited; "" for none.
func (s *Supervisor) agentOfProcess(pid int) string {
	chain := local.Ancestry(pid, 64)
	inherited := local.SubmissionOf(pid)
	contained := ""
	if l, ok := s.cfg.Runner.(runner.Locator); ok {
		contained = l.Containing(pid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.order {
		r := a.running
		if r == nil || r.proc == nil {
			continue
		}
		if inherited == r.id || contained == r.id {
			return a.id
		}
		// pgid 0: it runs elsewhere (a pod); 0 is also the session of
		// processes started from outside any session here, which would
		// otherwise all look like its subagents
		for _, pi := range chain {
			if r.proc.pgid > 0 && (r.proc.pgid == pi.Session || r.proc.pgid == pi.PGID) {
				return a.id
			}
		}
	}
	return ""
}

func errNested(agentID string) error {
	return &proto.Error{Code: proto.CodeNested, Message: fmt.Sprintf(
		"agent %s may not start or instruct agents: subagents do not get subagents of their own; start subdash with --allow-nested to allow it",
		agentID)}
}

// resolveDepth sets c.MaxDepth (SPEC §14): --max-depth, else
// MEMO_SUBAGENT_MAX_DEPTH, else proto.DefaultMaxDepth; an invalid
// variable means the default, as in Memo, with a warning.
func resolveDepth(c *Config, o Options, env Environment) error {
	switch {
	case o.MaxDepth < 0:
		return fmt.Errorf("invalid --max-depth %d: must be a positive number", o.MaxDepth)
	case o.MaxDepth > 0:
		c.MaxDepth = o.MaxDepth
		return nil
	}
	c.MaxDepth = proto.DefaultMaxDepth
	if v := strings.TrimSpace(env.Getenv("MEMO_SUBAGENT_MAX_DEPTH")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.Warnings = append(c.Warnings, fmt.Sprintf(
				"MEMO_SUBAGENT_MAX_DEPTH=%q is not a positive number; using %d", v, proto.DefaultMaxDepth))
		} else {
			c.MaxDepth = n
		}
	}
	return nil
}

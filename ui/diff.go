package ui

import (
	"context"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// openDiff shows what the shown submission of agent a changed in its work
// tree in the pager (SPEC §15), coloured unless NO_COLOR, or says why
// there is nothing to show: not tracked, or no changes (±0).
func (m *Model) openDiff(a proto.AgentInfo) tea.Cmd {
	if !m.cfg.Has(proto.FeatureChanges) {
		m.say(levelWarn, "this host does not track changes (it is an older subdash)")
		return nil
	}
	if m.opts.Pager == nil {
		m.say(levelWarn, "no pager configured")
		return nil
	}
	seq := m.shown.seq
	if m.shown.agent != a.AgentID || seq < 1 || seq > len(a.Submissions) {
		seq = len(a.Submissions)
	}
	if seq == 0 {
		return nil
	}
	switch c := a.Submissions[seq-1].Changes; {
	case c == nil:
		m.say(levelWarn, "changes not tracked: the host runs with --track-changes=false")
		return nil
	case !c.Tracked:
		m.say(levelWarn, c.Note)
		return nil
	case !c.Pending && c.Files == 0: // ±0: the pager would open on nothing
		m.say(levelInfo, fmt.Sprintf("no changes: submission %d of %s changed nothing in its work tree", seq, m.label(a.AgentID)))
		return nil
	}
	sup, id, color := m.sup, a.AgentID, !m.styles.NoColor
	return m.execPager(func(ctx context.Context, w io.Writer) error { return sup.WriteChanges(ctx, w, id, seq, color) })
}

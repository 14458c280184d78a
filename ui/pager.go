package ui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
)

// openPager shows the shown submission's log file in the pager.
func (m *Model) openPager(a proto.AgentInfo) tea.Cmd {
	if m.opts.Pager == nil {
		m.say(levelWarn, "no pager configured")
		return nil
	}
	seq := m.shown.seq
	if m.shown.agent != a.AgentID {
		seq = 0
	}
	sup, id, styles := m.sup, a.AgentID, m.styles
	feed := func(ctx context.Context, w io.Writer) error { return sup.WriteLines(ctx, w, id, seq, !styles.NoColor) }
	if a.Structured && !m.raw {
		// The transcript view pages the transcript, not the CLI's JSON.
		feed = func(ctx context.Context, w io.Writer) error { return writeTranscript(ctx, w, sup, id, seq, *styles) }
	}
	return m.execPager(feed)
}

// execPager runs the pager (Options.Pager) on what feed writes, feed
// called with a context that ends when the pager's does or the run's
// (Model.ctx): a feed waiting on a host that stopped answering lets the
// dashboard go on once the pager quits, and never outlives the dashboard.
func (m Model) execPager(feed func(ctx context.Context, w io.Writer) error) tea.Cmd {
	run := m.ctx
	joined := func(ctx context.Context, w io.Writer) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(run, cancel)()
		return feed(ctx, w)
	}
	return tea.Exec(onTerminal{ExecCommand: m.opts.Pager(joined), scr: m.opts.screen}, func(err error) tea.Msg { return pagerDoneMsg{err: err} })
}

// writeTranscript writes the transcript of submission seq of agent id to
// w, as the transcript view draws it (the pager's feed).
// It asks for transcriptPage entries at a time (a viewer's host answers at
// most 100,000 per request).
func writeTranscript(ctx context.Context, w io.Writer, sup Supervisor, id string, seq int, st theme.Styles) error {
	bw := bufio.NewWriter(w)
	for from := int64(0); ; {
		t, _, err := sup.Transcript(ctx, id, seq, from, transcriptPage)
		if err != nil {
			return err
		}
		// A failed write (the pager quit) ends the feed: no more pages
		// are fetched.
		if from == 0 && t.First > 0 {
			if _, err := fmt.Fprintf(bw, "… %d earlier entries are not kept in memory; t shows the raw log\n", t.First); err != nil {
				return err
			}
		}
		for _, e := range t.Entries {
			if _, err := fmt.Fprintln(bw, RenderEntry(e, st)); err != nil {
				return err
			}
		}
		from = max(from, t.First) + int64(len(t.Entries))
		if len(t.Entries) == 0 || from >= t.Total {
			if t.Pending != "" {
				if _, err := fmt.Fprintln(bw, transcript.ShowText(t.Pending)); err != nil {
					return err
				}
			}
			return bw.Flush()
		}
	}
}

// pagerFailed says in plain words that the pager failed and what to do,
// e.g. `pager "nonexistentpager" failed (exit status 127); set $PAGER to a
// pager such as less`.
func (m Model) pagerFailed(err error) string {
	name := "pager"
	if c := strings.TrimSpace(m.opts.PagerCommand); c != "" {
		name = fmt.Sprintf("pager %q", c)
	}
	return fmt.Sprintf("%s failed (%s); set $PAGER to a pager such as less", name, err)
}

// transcriptPage is how many transcript entries the pager's feed asks for
// at once.
const transcriptPage = 10000

package ui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/agenttable"
	"github.com/subdash/subdash/ui/internal/cells"
)

func newHelp(st theme.Styles) *help.Model {
	h := help.New()
	h.ShortSeparator = " · "
	h.Ellipsis = "…"
	h.Styles.ShortKey, h.Styles.FullKey = st.HelpKey, st.HelpKey
	h.Styles.ShortDesc, h.Styles.FullDesc = st.HelpDesc, st.HelpDesc
	h.Styles.ShortSeparator, h.Styles.FullSeparator = st.HelpSep, st.HelpSep
	h.Styles.Ellipsis = st.HelpSep
	return &h
}

// draw draws the dashboard (View): exactly the terminal's height in rows,
// none wider than the terminal.
func (m Model) draw() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.lay.tooSmall {
		return m.tooSmallView()
	}
	var main []string
	switch {
	case m.mode == modeHelp:
		main = m.helpView(m.width, m.lay.mainH)
	case m.tilesOn():
		main = m.tilesView()
	default:
		main = m.panes()
	}
	main = append(main, m.messageLine(), m.statusLine(), m.shortHelpLine())
	return strings.Join(main, "\n")
}

// tooSmallView is a centred message saying the size needed.
func (m Model) tooSmallView() string {
	msg := m.tooSmallMessage()
	if m.height < len(msg) { // the size there is survives longest
		msg = msg[len(msg)-m.height:]
	}
	switch m.mode {
	case modeConfirm: // a quit asked here must be answerable here
		msg = []string{m.confirm.question, m.help.ShortHelpView(m.confirm.helpKeys())}
	case modeStopping:
		msg = []string{fmt.Sprintf("%s stopping %d of %d agents…", agenttable.SymStopping, m.counts().Running, m.stopN)}
	}
	if m.height < len(msg) {
		msg = msg[:m.height]
	}
	top := (m.height - len(msg)) / 2
	lines := make([]string, m.height)
	for i := range lines {
		lines[i] = strings.Repeat(" ", m.width)
		if j := i - top; j >= 0 && j < len(msg) {
			lines[i] = m.styles.Warning.Render(cells.Center(msg[j], m.width))
		}
	}
	return strings.Join(lines, "\n")
}

// tooSmallMessage says the terminal is too small, the size needed and the
// size there is, split over lines when one would be cut (a cut "have"
// leaves the user guessing how far to resize); the last line matters most.
func (m Model) tooSmallMessage() []string {
	size := fmt.Sprintf("%dx%d", m.width, m.height)
	need := fmt.Sprintf("need ≥ %dx%d", MinWidth, MinHeight)
	if one := need + ", have " + size; lipgloss.Width(one) <= m.width {
		return []string{"terminal too small", one}
	}
	// Shorter words before cut ones: the numbers are what matter.
	fit := func(long, short string) string {
		if lipgloss.Width(long) <= m.width {
			return long
		}
		return short
	}
	return []string{
		fit("terminal too small", "too small"),
		fit(need, fmt.Sprintf("need %dx%d", MinWidth, MinHeight)),
		fit("have "+size, size),
	}
}

// firstKey is how a border names b: its first key, as help shows it
// ("j", "↑"), so that the border follows [keys].
func firstKey(b key.Binding) string {
	if ks := b.Keys(); len(ks) > 0 {
		return keymap.HelpKey(ks[:1])
	}
	return ""
}

// panes draws the table and the log pane, side by side or stacked, or
// the one a zoom shows.
func (m Model) panes() []string {
	l := m.lay
	var table, logBox []string
	if l.tableW > 0 {
		// When not every agent fits, the footer says which rows are drawn.
		tableFooter := ""
		if first, end := m.table.Shown(); first > 0 || end < m.table.Len() {
			tableFooter = fmt.Sprintf("%d–%d of %d · %s/%s", first+1, end, m.table.Len(), firstKey(m.keys.Down), firstKey(m.keys.Up))
		}
		if l.zoom == paneTable {
			tableFooter = strings.TrimPrefix(tableFooter+" · "+firstKey(m.keys.Zoom)+": back", " · ")
		}
		table = m.box(m.tableTitle(), tableFooter, m.table.View(), l.tableW, l.tableH)
	}
	if l.logW > 0 {
		logTitle, task, logFooter := m.logTitles()
		body := m.log.View()
		if m.shown.agent == "" {
			body = m.emptyLog()
		}
		if m.mode == modeAcross {
			logTitle, task, logFooter, body = m.across.results.Title(), "", m.across.results.Footer(), m.across.results.View()
		}
		if m.mode == modeQuestion {
			logTitle, task, logFooter, body = "question", "", "", m.questionView(l.logW-2)
		}
		if l.zoom == paneLog {
			logFooter = strings.TrimPrefix(logFooter+" · "+firstKey(m.keys.Zoom)+": back", " · ")
		}
		logBox = m.boxTask(logTitle, task, logFooter, body, l.logW, l.logH)
	}
	if !l.wide || l.zoom != paneNone {
		return append(table, logBox...)
	}
	out := make([]string, l.mainH)
	for i := range out {
		out[i] = table[i] + logBox[i]
	}
	return out
}

// emptyLog is the log pane's body when no agent is shown.
func (m Model) emptyLog() string {
	w, h := m.log.Width(), m.log.Height()
	hint := "no agent selected"
	if len(m.agents) == 0 {
		hint = "press " + m.keys.Spawn.Help().Key + " to spawn an agent"
	}
	lines := make([]string, h)
	for i := range lines {
		lines[i] = strings.Repeat(" ", w)
	}
	if name, onRow, _ := m.selectedHost(); onRow {
		for i, l := range m.hostLines(name) {
			if i+1 < h {
				lines[i+1] = m.styles.Muted.Render(cells.Fit(" "+l, w))
			}
		}
		return strings.Join(lines, "\n")
	}
	if h > 0 {
		lines[h/2] = m.styles.Muted.Render(cells.Center(hint, w))
	}
	return strings.Join(lines, "\n")
}

// logTitles returns the log pane's title and footer: which submission, how
// it went, the view mode, follow state and what it was asked; new lines
// and search matches. What it was asked ends the title where it fits, else
// it is task, for the bottom border's left (SPEC §7: the table's NOW says
// what it does, the pane's title what it was asked).
func (m Model) logTitles() (title, task, footer string) {
	if m.shown.agent == "" {
		return "log", "", ""
	}
	a, _ := m.agent(m.shown.agent)
	var sub proto.SubmissionInfo
	status := ""
	if i := m.shown.seq - 1; i >= 0 && i < len(a.Submissions) {
		sub = a.Submissions[i]
		status = agenttable.SubmissionText(sub, m.stopping[a.AgentID] && i == len(a.Submissions)-1)
	}
	title = m.logTitle(a, sub, status)
	// What the submission was asked, cut to the room left on the border
	// (see edge: a corner, a line and a space each side of the label).
	room := m.lay.logW - 6 - cells.Width(title) - len(" · ") - 2
	if msg := termtext.OneLine(cells.Head(sub.Message, 4096), 0); msg != "" && room >= minTask {
		msg, _ = cells.Cut(msg, room)
		title += " · “" + msg + "”"
	} else if msg != "" {
		task = "“" + msg + "”"
	}
	var foot []string
	if err := m.log.Err(); err != nil {
		foot = append(foot, "✗ cannot read: "+termtext.OneLine(err.Error(), 0))
	}
	if a.Failure != "" && m.shown.seq == len(a.Submissions) {
		foot = append(foot, "✗ "+termtext.OneLine(a.Failure, 0))
	}
	if a.LogDropped > 0 && m.shown.seq == len(a.Submissions) {
		// the log file misses output (SPEC §5): say how much, and where
		// the pager shows the cut
		foot = append(foot, proto.FormatBytes(a.LogDropped)+" of this output not in its log file (o marks where)")
	}
	if m.loading[m.shown] {
		foot = append(foot, "reading the log file…")
	}
	if q := m.log.Query(); q != "" {
		cur, n := m.log.Matches()
		foot = append(foot, fmt.Sprintf("/%s %d/%d", termtext.OneLine(q, 0), cur, n))
		if m.log.CurrentMatchCut() {
			foot = append(foot, "the match is past the right edge: "+m.keys.Wrap.Help().Key+" wraps")
		}
	}
	if !m.log.Following() {
		if n := m.log.NewItems(); n > 0 {
			foot = append(foot, fmt.Sprintf("↓ %d new lines · G follows", n))
		} else {
			foot = append(foot, "G follows")
		}
	}
	if first, total := m.log.Bounds(); total == 0 && !m.loading[m.shown] {
		foot = append(foot, "no output yet")
	} else if first > 0 && m.log.Top().Item <= first && !m.log.Following() {
		foot = append(foot, fmt.Sprintf("%d older lines in the log file (%s)", first, m.keys.Pager.Help().Key))
	}
	return title, task, strings.Join(foot, " · ")
}

// logTitle is the log pane's title without what the submission was asked:
// which agent and submission (sub, how it went in status), where it runs,
// its session, the view, wrap, whether the pane follows, what it changed,
// its usage; narrowed to the pane's width by dropping what says least
// first.
func (m Model) logTitle(a proto.AgentInfo, sub proto.SubmissionInfo, status string) string {
	// The parts in the order drawn, each named for what goes first when
	// the title is longer than the pane (shrink).
	type part struct{ key, text string }
	// head is which agent, which submission and how it went.
	head := func(label, seq, status string) string {
		return strings.TrimSpace(strings.TrimSuffix(label+" · "+seq, " · ") + " " + status)
	}
	label, seq := m.labelWithID(a.AgentID), fmt.Sprintf("#%d/%d", m.shown.seq, len(a.Submissions))
	parts := []part{{"head", head(label, seq, status)}}
	if a.Pod != "" {
		// where it runs with the Kubernetes runner (SPEC §13)
		where := "pod " + termtext.OneLine(a.Pod, 0)
		if a.Node != "" {
			where += " on " + termtext.OneLine(a.Node, 0)
		}
		parts = append(parts, part{"pod", where})
	}
	if id := a.SessionID; id != "" {
		parts = append(parts, part{"session", "session " + termtext.ShortID(termtext.OneLine(id, 0))})
	}
	if a.Structured {
		parts = append(parts, part{"view", map[bool]string{true: "transcript", false: "raw"}[m.shown.transcript]})
	}
	if m.log.Wrap() {
		parts = append(parts, part{"wrap", "wrap"})
	}
	parts = append(parts, part{"follow", map[bool]string{true: "following", false: "paused"}[m.log.Following()]})
	// what it changed, last: a title cut at the border keeps the rest
	switch c := sub.Changes; {
	case c == nil:
	case !c.Tracked:
		parts = append(parts, part{"changes", "changes not tracked"})
	default:
		parts = append(parts, part{"changes", c.Short()})
	}
	if u := agenttable.Usage(a.Usage); u != "" {
		parts = append(parts, part{"usage", u}) // the USAGE cell says the cost alone
	}
	joined := func() string {
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.text
		}
		return strings.Join(texts, " · ")
	}
	// shrink, in order: the parts that say least go, then the head
	// narrows (the status's symbol alone, the name without its id, an
	// agent of one submission without "#1/1"), then wrap; which agent and
	// whether the pane follows stay, and the border cuts what is left.
	symbol := strings.SplitN(status, " ", 2)[0] // ✓ ✗ ● ◌ ■
	drop := func(key string) func() {
		return func() { parts = slices.DeleteFunc(parts, func(p part) bool { return p.key == key }) }
	}
	shrink := []func(){
		drop("usage"), drop("session"), drop("pod"), drop("view"), drop("changes"),
		func() { parts[0].text = head(label, seq, symbol) },
		func() { label = m.label(a.AgentID); parts[0].text = head(label, seq, symbol) },
		func() {
			if len(a.Submissions) == 1 {
				parts[0].text = head(label, "", symbol)
			}
		},
		drop("wrap"),
	}
	for room := m.lay.logW - 6; cells.Width(joined()) > room && len(shrink) > 0; shrink = shrink[1:] {
		shrink[0]()
	}
	return joined()
}

// minTask is the fewest cells of what the shown submission was asked that
// the log pane's title shows; with less room it goes to the bottom border.
const minTask = 12

// box draws body (h-2 rows of exactly w-2 cells, as every widget draws
// them) in a rounded border with a title on the top edge and a footer on
// the bottom edge.
func (m Model) box(title, footer, body string, w, h int) []string {
	return m.boxTask(title, "", footer, body, w, h)
}

// boxTask is box with task at the left of the bottom edge, in the room
// the footer leaves.
func (m Model) boxTask(title, task, footer, body string, w, h int) []string {
	k := m.ink
	inner := w - 2
	out := make([]string, 0, h)
	out = append(out, k.border.On("╭")+edge(k.border, k.title, title, inner, false)+k.border.On("╮"))
	rows := strings.Split(body, "\n")
	side := k.border.On("│")
	blank := strings.Repeat(" ", max(inner, 0))
	for i := 0; i < h-2; i++ {
		row := blank
		if i < len(rows) && rows[i] != "" {
			row = rows[i]
		}
		out = append(out, side+row+side)
	}
	out = append(out, k.border.On("╰")+bottomEdge(k.border, k.title, k.muted, task, footer, inner)+k.border.On("╯"))
	return out
}

// bottomEdge draws a bottom border of w cells with footer at the right,
// as edge does, and left at the left in the room the footer leaves, cut
// with "…"; left goes when fewer than minTask cells of it would show.
func bottomEdge(bs, leftInk, footInk theme.Ink, left, footer string, w int) string {
	if left == "" || w < 6 {
		return edge(bs, footInk, footer, w, true)
	}
	ft, fw := "", 0
	if footer != "" {
		ft, fw = cells.Cut(" "+footer+" ", w-2)
	}
	room := w - fw - 3 // a line before the left label, one after, and the footer's last
	if room < minTask+2 {
		return edge(bs, footInk, footer, w, true)
	}
	lt, lw := cells.Cut(" "+left+" ", room)
	s := bs.On("─") + leftInk.On(lt) + bs.On(strings.Repeat("─", w-2-lw-fw))
	if fw > 0 {
		s += footInk.On(ft)
	}
	return s + bs.On("─")
}

// edge draws a horizontal border of w cells holding label, at the left
// (title) or right (footer).
func edge(bs, ls theme.Ink, label string, w int, right bool) string {
	if label == "" || w < 6 {
		return bs.On(strings.Repeat("─", max(w, 0)))
	}
	text, tw := cells.Cut(" "+label+" ", w-2)
	fill := strings.Repeat("─", w-1-tw)
	if right {
		return bs.On(fill) + ls.On(text) + bs.On("─")
	}
	return bs.On("─") + ls.On(text) + bs.On(fill)
}

// frameInks are the inks of what every frame draws: the panes' borders
// and titles, the status line (theme.Ink: a frame drawn with
// Style.Render spent half its time in it).
type frameInks struct {
	border, title, muted                                 theme.Ink
	running, completed, errored, closed, warning, failed theme.Ink
	needsYou                                             theme.Ink
}

// inksOf returns the frame's inks for st, with the table's needs-you mark.
func inksOf(st theme.Styles, needsYou lipgloss.Style) *frameInks {
	return &frameInks{
		border: theme.InkOf(st.Border), title: theme.InkOf(st.Title), muted: theme.InkOf(st.Muted),
		running: theme.InkOf(st.Running), completed: theme.InkOf(st.Completed), errored: theme.InkOf(st.Errored),
		closed: theme.InkOf(st.Closed), warning: theme.InkOf(st.Warning), failed: theme.InkOf(st.Error),
		needsYou: theme.InkOf(needsYou),
	}
}

// messageLine is the input, a question, the last operation's outcome, or
// the configuration's warnings and notes.
func (m Model) messageLine() string {
	w := m.width
	switch m.mode {
	case modeInput:
		return cells.Fit(m.input.View(), w)
	case modeConfirm:
		return cells.Fit(m.styles.Confirm.Render("? "+m.confirm.question), w)
	case modeStopping:
		left := m.counts().Running
		return cells.Fit(m.styles.Stopping.Render(fmt.Sprintf("%s stopping %d of %d agents…", agenttable.SymStopping, left, m.stopN)), w)
	}
	if f := m.reply; f.text != "" {
		text := termtext.OneLine(f.text, 0) // it may quote a message, a query or an error
		switch f.level {
		case levelError:
			return cells.Fit(m.styles.Error.Render("✗ "+text), w)
		case levelWarn:
			return cells.Fit(m.styles.Warning.Render("⚠ "+text), w)
		}
		return cells.Fit(m.styles.Note.Render("✓ "+text), w)
	}
	return m.notesLine(w)
}

// statusLine shows counts per status, running/max, the agent command and
// whether there are warnings.
func (m Model) statusLine() string {
	c := m.counts()
	k := m.ink
	parts := []string{
		k.running.On(fmt.Sprintf("%s %d/%d running", agenttable.SymRunning, c.Running, m.maxAgents())),
		k.completed.On(fmt.Sprintf("%s %d completed", agenttable.SymCompleted, c.Completed)),
		k.errored.On(fmt.Sprintf("%s %d errored", agenttable.SymErrored, c.Errored)),
		k.closed.On(fmt.Sprintf("%s %d closed", agenttable.SymClosed, c.Closed)),
	}
	if n := c.NeedYou; n > 0 {
		parts = append(parts, k.needsYou.On(fmt.Sprintf("%s %d need%s you (%s)", agenttable.SymNeedsYou, n, map[bool]string{true: "s", false: ""}[n == 1], m.keys.NextNeedsYou.Help().Key)))
	}
	if n := c.Stalled; n > 0 {
		parts = append(parts, k.warning.On(fmt.Sprintf("%s %d stalled", agenttable.SymStalled, n)))
	}
	if u := agenttable.Usage(c.Usage); u != "" {
		parts = append(parts, k.muted.On(agenttable.SymSubtree+" "+u))
	}
	if b := m.cfg.FleetBudgetUSD; b > 0 {
		ink := k.muted
		if c.RunCostUSD >= b {
			ink = k.warning
		}
		parts = append(parts, ink.On(fmt.Sprintf("%s%.2f of $%.2f fleet budget", agenttable.SymBudget, c.RunCostUSD, b)))
	}
	if n := c.Restored; n > 0 {
		parts = append(parts, k.muted.On(fmt.Sprintf("%s %d restored", agenttable.SymRestored, n)))
	}
	if n := c.Approvals; n > 0 {
		parts = append(parts, k.warning.On(fmt.Sprintf("⚠ %d need%s approval", n, map[bool]string{true: "s", false: ""}[n == 1])))
	}
	if n := c.Failing; n > 0 {
		parts = append(parts, k.failed.On(fmt.Sprintf("✗ %d failing to log", n)))
	}
	if n := len(m.cfg.Warnings); n > 0 {
		parts = append(parts, k.warning.On(fmt.Sprintf("⚠ %d warning%s", n, map[bool]string{true: "", false: "s"}[n == 1])))
	}
	if s := m.hostsStatus(); s != "" {
		parts = append(parts, k.failed.On(s))
	}
	tail := "  │ cmd: " + termtext.OneLine(m.cfg.Command, 0)
	if m.multi() {
		tail = fmt.Sprintf("  │ %d hosts", len(m.hosts))
	}
	line := strings.Join(parts, "  ") + k.muted.On(tail)
	return cells.Fit(line, m.width)
}

// shortHelpLine is the one-line help of whatever has focus.
func (m Model) shortHelpLine() string {
	var b []key.Binding
	switch m.mode {
	case modeInput:
		k := m.input.KeyMap
		verb := map[inputKind]string{inputSpawn: "spawn", inputSend: "send", inputEdit: "resend", inputSearch: "search", inputDeny: "deny", inputAcross: "search", inputFilter: "filter"}[m.inputKind]
		if a, ok := m.agent(m.inputTarget); ok && a.Running() && m.inputKind != inputSearch && m.inputKind != inputDeny && m.inputKind != inputFilter {
			verb += " (asks: interrupt or queue)"
		}
		k.Submit.SetHelp("enter", verb)
		b = k.ShortHelp()
		if m.inputKind == inputSpawn && m.tree() {
			next := k.NextField
			next.SetHelp("tab", map[bool]string{true: "message", false: "task name"}[m.spawn.naming])
			b = append(b[:1:1], append([]key.Binding{next}, b[1:]...)...)
		}
	case modeConfirm:
		b = m.confirm.helpKeys()
	case modeHelp:
		b = m.helpKeys.ShortHelp()
	case modeAcross:
		b = m.across.results.KeyMap.ShortHelp()
	case modeQuestion:
		b = keymap.DefaultQuestion().ShortHelp()
	case modeStopping:
		q := m.keys.Quit
		q.SetHelp("q", "kill them now and quit")
		b = []key.Binding{q}
	default:
		if m.tilesOn() {
			return m.tilesHelpLine()
		}
		return m.normalHelpLine()
	}
	return m.helpLine(b, false)
}

// normalHelpLine is the one-line help of the usual view.
func (m Model) normalHelpLine() string {
	if ab, ok := m.approvalHelp(); ok && !m.readOnlyHere() {
		return m.helpLine(ab, false)
	}
	b := m.keys.ShortHelp()
	if m.readOnlyHere() {
		// a read-only viewer offers what it can do: look
		b = []key.Binding{m.keys.Down, m.keys.Search, m.keys.Transcript, m.keys.Pager, m.keys.Help, m.keys.Quit}
	}
	// what m zooms: the focused pane (tab moves the focus), or back
	z := m.keys.Zoom
	switch {
	case m.zoom != paneNone:
		z.SetHelp(z.Help().Key, "unzoom")
	case m.focus == paneTable:
		z.SetHelp(z.Help().Key, "zoom table")
	default:
		z.SetHelp(z.Help().Key, "zoom log")
	}
	n := len(b) // before search, help and quit: a narrow line drops search first
	b = append(b[:n-3:n-3], z, b[n-3], b[n-2], b[n-1])
	return m.helpLine(b, true)
}

// helpLine draws bindings b as the one-line help, cut to the width; with
// trim, when the line is too narrow, bindings go from the middle: the
// first ones (the main actions) and the last two (help and quit) stay
// visible. A line is drawn once for its bindings and width, then taken
// from the model's cache (frame.go): the help line is the same frame
// after frame.
func (m Model) helpLine(b []key.Binding, trim bool) string {
	return m.view.frames.helpLine(b, trim, m.width, func() string {
		if trim {
			whole := *m.help
			whole.SetWidth(0) // measure without bubbles' own cut
			for len(b) > 3 && cells.Width(whole.ShortHelpView(b)) > m.width {
				b = append(b[:len(b)-3:len(b)-3], b[len(b)-2:]...)
			}
		}
		return cells.Fit(m.help.ShortHelpView(b), m.width)
	})
}

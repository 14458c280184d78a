package ui

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/agenttable"
	"github.com/subdash/subdash/ui/internal/cells"
	"github.com/subdash/subdash/ui/logview"
)

// Tiles (SPEC §7 "Tiles", v): the running agents' output side by side,
// each tile a log pane of its own that follows the last lines of its
// agent's latest submission, titled with the agent's name, status,
// whether it follows and what it does now. The table's rows choose which
// agents tile (the filter and the folds), in their order; the selected
// tile is the table's selection, so the agent keys act on it and enter
// (or v, esc) goes back to the usual view with it selected. Only the tiles
// on screen hold a pane and fetch (a viewer asks for them all in one
// request, proto.WindowsReader); an agent off screen costs nothing.

// Smallest tile, border included: two tiles stack at 80x24, four fit at
// 120x40.
// maxTiles bounds the tiles on screen (a terminal over 400x100 would fit
// more): a viewer asks for them in one request, which takes at most 64
// windows (the control socket's POST /v1/windows).
const (
	minTileW = 48
	minTileH = 10
	maxTiles = 64
)

// tiles is the state of the tiles screen.
type tiles struct {
	on    bool
	ids   []string // the agents that tile, in the table's order
	top   int      // index in ids of the first tile on screen
	cols  int      // the grid's columns
	shown []tile   // the tiles on screen, row by row
}

// tile is one tile on screen: which agent, its place, and its pane.
type tile struct {
	id   string
	key  logKey // what the pane shows; seq 0 before the agent's first submission
	rect image.Rectangle
	log  logview.Model
}

// symTile marks the selected tile's title (its border is heavy too, for
// NO_COLOR).
const symTile = "▶"

// tilesMsg carries the pages the tiles asked for (fetchTiles).
type tilesMsg struct {
	keys  []logKey
	reqs  []logview.Request
	pages []logview.Page
	errs  []error
}

// tilesOn reports whether the tiles show: on and laid out.
func (m Model) tilesOn() bool { return m.tiles.on && !m.lay.tooSmall }

// toggleTiles shows the tiles, or the usual view again (v). A viewer of a
// host without FeatureFollowMany is told the host needs upgrading.
func (m *Model) toggleTiles() {
	if m.tiles.on {
		m.closeTiles()
		return
	}
	if !m.cfg.Has(proto.FeatureFollowMany) {
		m.say(levelWarn, "tiles need a newer host: this one cannot send several windows at once (follow-many); upgrade subdash on the host")
		return
	}
	m.tiles.on = true
	m.relayout()
	m.layoutTiles()
}

// closeTiles goes back to the usual view with the selected tile's agent
// selected and the log pane focused.
func (m *Model) closeTiles() {
	m.tiles = tiles{}
	m.focus = paneLog
	m.relayout()
	m.syncLog(false)
}

// tileAgents returns the agents that tile now: the running ones among the
// table's rows.
func (m Model) tileAgents() []string {
	return m.table.RowAgents(func(a *proto.AgentInfo) bool { return a.Running() })
}

// tileGrid returns how many tile columns and rows fit the main area.
func (m Model) tileGrid() (cols, rows int) {
	return max(m.width/minTileW, 1), max(m.lay.mainH/minTileH, 1)
}

// layoutTiles takes the agents that tile again and lays out those on the
// page that holds the selection: each keeps its pane (and where it was
// scrolled to) while on screen; the panes of agents that left go.
func (m *Model) layoutTiles() {
	if !m.tilesOn() {
		return
	}
	t := &m.tiles
	t.ids = m.tileAgents()
	cols, rows := m.tileGrid()
	page := min(cols*rows, maxTiles)
	sel := slices.Index(t.ids, m.table.SelectedID())
	if sel < 0 && len(t.ids) > 0 {
		sel = 0
		m.table.Select(t.ids[0])
	}
	t.top = max(sel, 0) / page * page
	n := min(len(t.ids)-t.top, page)
	old := t.shown
	t.shown = nil
	if n <= 0 {
		return
	}
	// as few rows as the columns allow, as evenly filled as they go
	nrows := (n + cols - 1) / cols
	t.cols = (n + nrows - 1) / nrows
	h := m.lay.mainH / nrows
	for i := range n {
		c, r := i%t.cols, i/t.cols
		inRow := min(t.cols, n-r*t.cols) // a last row of fewer tiles shares the width too
		w := m.width / inRow
		x0, y0 := c*w, r*h
		x1, y1 := x0+w, y0+h
		if c == inRow-1 {
			x1 = m.width
		}
		if r == nrows-1 {
			y1 = m.lay.mainH
		}
		id := t.ids[t.top+i]
		tl := tile{id: id, rect: image.Rect(x0, y0, x1, y1)}
		if j := slices.IndexFunc(old, func(o tile) bool { return o.id == id }); j >= 0 {
			tl.key, tl.log = old[j].key, old[j].log
		} else {
			tl.log = logview.New(logview.DefaultStyles(*m.styles))
			tl.log.KeyMap = m.log.KeyMap
		}
		tl.log.SetSize(max(tl.rect.Dx()-2, 0), max(tl.rect.Dy()-2, 0))
		t.shown = append(t.shown, tl)
	}
	for i := range t.shown {
		m.syncTile(&t.shown[i], false)
	}
}

// syncTile points tile t's pane at its agent's latest submission (a new
// one starts following), and tells it the bounds the snapshot carries
// (and, when output arrived, that its end changed), as syncLog does for
// the log pane.
func (m *Model) syncTile(t *tile, output bool) {
	id := t.id
	a, ok := m.agent(id)
	if !ok || len(a.Submissions) == 0 {
		t.key = logKey{}
		t.log.Clear()
		return
	}
	key := logKey{agent: id, seq: len(a.Submissions), transcript: a.Structured && !m.raw}
	if key != t.key {
		t.key = key
		t.log.SetLog(logview.State{Follow: true})
	} else if output {
		t.log.Changed()
	}
	c := a.Submissions[key.seq-1].Output
	switch {
	case c == (proto.OutputCounts{}):
	case key.transcript && c.Entries > 0:
		t.log.SetBounds(c.FirstEntry, c.Entries)
	case !key.transcript && !c.Evicted:
		t.log.SetBounds(c.FirstLine, c.Lines)
	}
}

// tilesChanged takes the supervisor's changes on the tiles: the output
// of an agent on screen goes to its tile. It reports whether a tile
// changed (the agents that tile are taken again in tilesSettle).
func (m *Model) tilesChanged(cs []proto.Change) bool {
	if !m.tilesOn() {
		return false
	}
	shows := false
	for _, c := range cs {
		if !c.Output && c.Info == nil {
			continue
		}
		for i := range m.tiles.shown {
			if m.tiles.shown[i].id == c.AgentID {
				m.syncTile(&m.tiles.shown[i], c.Output)
				shows = true
			}
		}
	}
	return shows
}

// tilesSettle lays the tiles out again when the agents that tile changed
// (agents started or ended, came or went, the filter or a fold) or the
// selection left the page. Cost: O(rows), once per Update on the tiles.
func (m *Model) tilesSettle() {
	if !m.tilesOn() {
		return
	}
	if !slices.Equal(m.tiles.ids, m.tileAgents()) || m.selectedTile() < 0 && len(m.tiles.ids) > 0 {
		m.layoutTiles()
	}
}

// selectedTile returns the index in tiles.shown of the selected tile, -1
// for none.
func (m Model) selectedTile() int {
	sel := m.table.SelectedID()
	return slices.IndexFunc(m.tiles.shown, func(t tile) bool { return t.id == sel })
}

// tilesKey handles a key on the tiles; it reports false for a key the
// dashboard handles as usual (the agent keys act on the selected tile).
func (m *Model) tilesKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.keys
	move := func(d int) {
		ids := m.tiles.ids
		if len(ids) == 0 {
			return
		}
		i := max(slices.Index(ids, m.table.SelectedID()), 0)
		m.table.Select(ids[min(max(i+d, 0), len(ids)-1)])
		m.layoutTiles()
	}
	switch {
	case key.Matches(k, km.Tiles, km.ClearMatch, km.TileOpen):
		m.closeTiles()
	case key.Matches(k, km.Up):
		move(-max(m.tiles.cols, 1))
	case key.Matches(k, km.Down):
		move(max(m.tiles.cols, 1))
	case key.Matches(k, km.FoldOrParent):
		move(-1)
	case key.Matches(k, km.UnfoldOrChild):
		move(1)
	case keymap.Matches(k, m.log.KeyMap):
		if i := m.selectedTile(); i >= 0 {
			m.tiles.shown[i].log, _ = m.tiles.shown[i].log.Update(k)
		}
	case !key.Matches(k, km.SplitLess, km.SplitMore, km.Zoom, km.FocusPane, km.FirstAgent, km.LastAgent, km.AgentsPageUp, km.AgentsPageDown,
		km.Search, km.SearchAgents, km.PrevSubmission, km.NextSubmission, km.Transcript):
		return nil, false // quit, help, the filter, folds and the agent keys as usual
	default: // the keys of the table's and the log pane's layout and views
		m.say(levelInfo, "not on the tiles: "+firstKey(km.TileOpen)+" opens the selected agent in the usual view")
	}
	return nil, true
}

// fetchTiles returns the command fetching what the tiles on screen need
// to draw, in one request (SPEC §9: nothing for agents off screen).
func (m *Model) fetchTiles() tea.Cmd {
	if !m.tilesOn() {
		return nil
	}
	var msg tilesMsg
	for i := range m.tiles.shown {
		t := &m.tiles.shown[i]
		if t.key.seq == 0 {
			continue
		}
		if req, ok := t.log.Request(); ok {
			msg.keys, msg.reqs = append(msg.keys, t.key), append(msg.reqs, req)
		}
	}
	if len(msg.keys) == 0 {
		return nil
	}
	sup, styles, ctx := m.sup, m.styles, m.ctx
	return func() tea.Msg {
		msg.pages, msg.errs = fetchPages(ctx, sup, msg.keys, msg.reqs, *styles)
		return msg
	}
}

// fetchPages reads the pages of several logs: in one call when the
// backend reads several windows at once (a viewer's link), else one by
// one (a host's memory). It may block: the dashboard calls it in a
// command.
func fetchPages(ctx context.Context, sup Supervisor, keys []logKey, reqs []logview.Request, st theme.Styles) ([]logview.Page, []error) {
	pages, errs := make([]logview.Page, len(keys)), make([]error, len(keys))
	wr, many := sup.(proto.WindowsReader)
	if !many {
		for i := range keys {
			pages[i], errs[i] = fetchPage(ctx, sup, keys[i], reqs[i], st)
		}
		return pages, errs
	}
	asks := make([]proto.WindowRequest, len(keys))
	for i, k := range keys {
		asks[i] = proto.WindowRequest{AgentID: k.agent, Submission: k.seq, Transcript: k.transcript, From: reqs[i].From, N: reqs[i].N}
	}
	answers, err := wr.Windows(ctx, asks)
	for i := range keys {
		switch {
		case err != nil:
			errs[i] = err
		case i >= len(answers):
			errs[i] = fmt.Errorf("the host answered %d of %d windows", len(answers), len(keys))
		case answers[i].Err != nil:
			errs[i] = answers[i].Err
		case keys[i].transcript:
			if answers[i].Structured {
				pages[i] = entriesPage(answers[i].Transcript, reqs[i], st)
			}
		default:
			pages[i] = windowPage(answers[i].Window, reqs[i])
		}
	}
	return pages, errs
}

// onTiles hands the fetched pages to the tiles still showing them.
func (m *Model) onTiles(msg tilesMsg) {
	for i, k := range msg.keys {
		for j := range m.tiles.shown {
			if m.tiles.shown[j].key == k {
				m.tiles.shown[j].log.SetPage(msg.reqs[i], msg.pages[i], msg.errs[i])
			}
		}
	}
}

// tilesView draws the tiles in the main area.
func (m Model) tilesView() []string {
	w, h := m.width, m.lay.mainH
	canvas := make([][]string, h) // per row, the tiles' pieces left to right
	if len(m.tiles.shown) == 0 {
		hint := "no running agent to tile: " + firstKey(m.keys.Tiles) + " goes back"
		if m.filter.active() {
			hint = "no running agent the filter shows: " + firstKey(m.keys.Filter) + " changes it, " + firstKey(m.keys.Tiles) + " goes back"
		}
		body := make([]string, h)
		for i := range body {
			body[i] = strings.Repeat(" ", w)
		}
		body[h/2] = m.styles.Muted.Render(cells.Center(hint, w))
		return body
	}
	sel := m.selectedTile()
	for i, t := range m.tiles.shown {
		box := m.tileBox(t, i == sel)
		for r, line := range box {
			canvas[t.rect.Min.Y+r] = append(canvas[t.rect.Min.Y+r], line)
		}
	}
	out := make([]string, h)
	for y := range out {
		out[y] = strings.Join(canvas[y], "")
		if rest := w - cells.Width(out[y]); rest > 0 {
			out[y] += strings.Repeat(" ", rest) // a last row of fewer tiles
		}
	}
	return out
}

// tileBox draws tile t: its title on the top border, its pane, and, on
// the selected tile, a heavy border.
func (m Model) tileBox(t tile, selected bool) []string {
	a, _ := m.agent(t.id)
	title := m.tileTitle(a, t, selected)
	body := t.log.View()
	if t.key.seq == 0 {
		body = ""
	}
	footer := ""
	if err := t.log.Err(); err != nil {
		footer = "✗ cannot read: " + termtext.OneLine(err.Error(), 0)
	} else if first, total := t.log.Bounds(); total == 0 && first == 0 {
		footer = "no output yet"
	}
	lines := m.box(title, footer, body, t.rect.Dx(), t.rect.Dy())
	if selected {
		heavy := strings.NewReplacer("╭", "┏", "╮", "┓", "╰", "┗", "╯", "┛", "─", "━", "│", "┃")
		for i, l := range lines {
			if i == 0 || i == len(lines)-1 {
				lines[i] = heavy.Replace(l)
				continue
			}
			// only the side borders: the body's own lines stay as drawn
			l = strings.Replace(l, "│", "┃", 1)
			if j := strings.LastIndex(l, "│"); j >= 0 {
				l = l[:j] + "┃" + l[j+len("│"):]
			}
			lines[i] = l
		}
	}
	return lines
}

// tileTitle is a tile's title: the selection's mark, which agent, its
// status, whether it follows, and what it does now, cut by the border.
func (m Model) tileTitle(a proto.AgentInfo, t tile, selected bool) string {
	mark := ""
	if selected {
		mark = symTile + " "
	}
	status := ""
	if n := len(a.Submissions); n > 0 {
		status = agenttable.SubmissionText(a.Submissions[n-1], m.stopping[a.AgentID])
	}
	follow := map[bool]string{true: "following", false: "paused"}[t.log.Following()]
	title := strings.TrimSpace(mark+m.label(a.AgentID)+" "+status) + " · " + follow
	if now := termtext.OneLine(a.Now, 0); now != "" {
		title += " · " + now
	}
	return title
}

// tileAt returns the index in tiles.shown of the tile at cell (x, y), -1
// for none.
func (m Model) tileAt(x, y int) int {
	pt := image.Pt(x, y)
	return slices.IndexFunc(m.tiles.shown, func(t tile) bool { return pt.In(t.rect) })
}

// tilesMouse handles a click (it selects the tile) or a turn of the wheel
// (it scrolls the tile under the pointer, which stops following) on the
// tiles.
func (m *Model) tilesMouse(msg tea.MouseMsg) {
	ev := msg.Mouse()
	i := m.tileAt(ev.X, ev.Y)
	if i < 0 {
		return
	}
	switch msg.(type) {
	case tea.MouseClickMsg:
		if ev.Button == tea.MouseLeft {
			m.table.Select(m.tiles.shown[i].id)
		}
	case tea.MouseWheelMsg:
		switch ev.Button {
		case tea.MouseWheelUp:
			m.tiles.shown[i].log.ScrollUp(wheelLines)
		case tea.MouseWheelDown:
			m.tiles.shown[i].log.ScrollDown(wheelLines)
		}
	}
}

// tilesHelpLine is the one-line help on the tiles: which tiles show,
// then the keys that work there.
func (m Model) tilesHelpLine() string {
	km := m.keys
	back, open, move := km.Tiles, km.TileOpen, km.Down
	back.SetHelp(firstKey(km.Tiles)+"/"+firstKey(km.ClearMatch), "back")
	open.SetHelp(open.Help().Key, "open")
	move.SetHelp(firstKey(km.Down)+"/"+firstKey(km.Up)+"/←/→", "move")
	b := []key.Binding{open, back, move, km.Send, km.Interrupt, km.Filter, km.Help, km.Quit}
	head := m.tilesFooter() + " · "
	return cells.Fit(m.ink.muted.On(head)+m.helpLine(b, true), m.width)
}

// tilesFooter says how many agents tile, and which show when not all
// fit.
func (m Model) tilesFooter() string {
	n := len(m.tiles.ids)
	if len(m.tiles.shown) == n {
		return fmt.Sprintf("tiles: %d running", n)
	}
	return fmt.Sprintf("tiles %d–%d of %d running", m.tiles.top+1, m.tiles.top+len(m.tiles.shown), n)
}

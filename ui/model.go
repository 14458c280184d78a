package ui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/agenttable"
	"github.com/subdash/subdash/ui/lineinput"
	"github.com/subdash/subdash/ui/logview"
)

// mode says what has the keyboard. Focus first: the input, a confirmation
// or the help overlay take keys before the dashboard does.
type mode int

const (
	modeNormal   mode = iota
	modeInput         // the one-line input
	modeConfirm       // a yes/no question
	modeHelp          // the full help overlay
	modeStopping      // quitting: waiting for running submissions to end
	modeQuestion      // the question panel (questions.go)
)

// inputKind says what the input line is for.
type inputKind int

const (
	inputSpawn inputKind = iota
	inputSend
	inputEdit // edit-and-resend
	inputSearch
	inputDeny   // the reason of a denial (SPEC §12)
	inputFilter // the table's filter (SPEC §11)
)

// level is the kind of a message on the message line.
type level int

const (
	levelInfo level = iota
	levelWarn
	levelError
)

// reply is what the message line says about what was just asked of the
// dashboard: an operation's outcome or error, a search that found
// nothing, a key that does nothing here. It stays until the next one;
// levelInfo ones go after replyTTL. (Notes, notes.go, are the standing
// facts the line shows when there is no reply.)
type reply struct {
	level level
	text  string
	at    time.Time
	// search is set on what the log pane's search said (no match): a
	// later search that finds makes it stale.
	search bool
}

// replyTTL is how long an info reply stays.
const replyTTL = 6 * time.Second

// confirmation is a pending yes/no question.
type confirmation struct {
	question string
	keys     keymap.Confirm
	yes, no  func(m *Model) tea.Cmd
	// queue, when set, makes it the question of a send to a running agent
	// (SPEC §11): Interrupt runs yes, Queue queue, Steer steer, Cancel no.
	queue, steer func(m *Model) tea.Cmd
	choice       keymap.SendChoice
	// pick, when set, makes it a choice among picks answered by number
	// (hosts.go): pick runs with the index chosen.
	pick  func(m *Model, i int) tea.Cmd
	picks int
}

// helpKeys returns the bindings the question's help line shows.
func (c confirmation) helpKeys() []key.Binding {
	if c.pick != nil {
		return c.pickHelp()
	}
	if c.queue != nil {
		return c.choice.ShortHelp()
	}
	return c.keys.ShortHelp()
}

// logKey names what the log pane shows.
type logKey struct {
	agent      string
	seq        int // resolved submission number, ≥ 1
	transcript bool
}

// agentView is what the dashboard remembers per agent.
type agentView struct {
	seq      int // chosen submission; 0 = follow the latest
	state    logview.State
	shownKey logKey // what state is a position in
}

// Model is the dashboard. Create it with New; Run runs it.
type Model struct {
	sup Supervisor
	// ctx is the run's context (Run): every command's call on sup takes
	// it, so that an operation in flight (a call on a host that stopped
	// answering) ends when the dashboard quits instead of outliving it.
	// New sets context.Background, for a model driven without Run.
	ctx    context.Context
	qp     questionPanel // the question panel, in modeQuestion
	opts   Options
	cfg    proto.HostConfig
	keys   keymap.KeyMap
	styles *theme.Styles // shared by the copies of a Model (Bubble Tea copies it per message)
	ink    *frameInks    // styles' inks for the borders and the status line; shared as styles
	now    func() time.Time

	width, height int
	lay           layout

	agents   []proto.AgentInfo
	table    agenttable.Model
	log      logview.Model
	input    lineinput.Model
	help     *help.Model // shared by the copies of a Model: replaced, never changed in place (layout)
	helpKeys keymap.HelpOverlay
	helpTop  int // first line of the help overlay shown

	mode        mode
	inputKind   inputKind
	inputTarget string
	denyRequest proto.PendingApproval // the request inputDeny answers
	spawn       spawnForm             // the spawn input's other field
	confirm     confirmation

	shown    logKey
	views    map[string]agentView
	raw      bool            // show raw output even when a transcript exists
	stopping map[string]bool // stops requested here, shown before the supervisor confirms
	loading  map[logKey]bool // submissions being read back from their log file, shown in the pane
	reply    reply
	frame    int
	ticking  bool
	pending  string // agent to select once it appears
	stopN    int    // running submissions being stopped on quit
	tickFn   func() tea.Cmd
	storage  proto.Storage // where the logs are, for the help overlay
	// storageHost is the host whose logs storage says, with several.
	storageHost string
	hostErrs    []string // errors of the host's other parts (Options.HostErrors)
	linkDown    string   // a viewer's link to its host is down: what it does about it (proto.Change.Link)
	// shutdownErr is the error of stopping the agents on quit; Run
	// returns it.
	shutdownErr error
	// spawns numbers the spawns typed here, in order; chosen is the
	// number of the newest whose agent took the selection: the one typed
	// last keeps it, whatever order the answers arrive in.
	spawns, chosen int
	// restored are the agents the host restored at start, as this
	// dashboard first saw them (AgentInfo.Restored); forgotten counts
	// those forgotten since, which the host's note on them
	// (proto.RestoredNote) no longer counts.
	restored  map[string]bool
	forgotten int

	// Attention (SPEC §11).
	focused   bool              // the terminal has focus; true until it says otherwise
	notified  map[string]uint64 // per agent, the Attention.Seq already accounted for
	seenAsked map[string]uint64 // per agent, the Attention.Seq a MarkSeen was sent for
	filter    filter            // which agents the table shows
	match     []bool            // the filter's verdict per agent (m.agents[i]); nil without a filter
	matchN    int               // how many agents the filter matches (all without one)
	at        map[string]int    // agent id → index in agents
	across    across            // the search across agents (across.go)

	view viewState // the counts of agents and the frame drawn last (frame.go)

	// The layout's state (layout.go): where the user put the border
	// between the panes, which pane is zoomed and which has the focus
	// (what m zooms); dragging is set while the mouse drags the border
	// (mouse.go).
	split    split
	zoom     pane
	focus    pane
	dragging bool

	tiles tiles // the tiles screen (v, tiles.go)

	// hosts are the hosts of a dashboard of several hosts (hosts.go), nil
	// with one; ambiguous the labels that agents of two hosts share.
	hosts     []proto.HostState
	ambiguous map[string]bool
}

// New returns the dashboard for s, with the agents s has now.
func New(s Supervisor, o Options) Model {
	if o.Styles == nil {
		st := theme.Plain()
		o.Styles = &st
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	st := *o.Styles
	keys := keymap.DefaultKeyMap()
	if o.Keys != nil {
		keys = *o.Keys
	}
	m := Model{
		sup:      s,
		ctx:      context.Background(),
		opts:     o,
		cfg:      s.HostConfig(),
		keys:     keys,
		styles:   &st,
		now:      o.Now,
		table:    agenttable.New(agenttable.DefaultStyles(st)),
		log:      logview.New(logview.DefaultStyles(st)),
		input:    lineinput.New(lineinput.DefaultStyles(st)),
		help:     newHelp(st),
		helpKeys: keymap.DefaultHelpOverlay(),
		views:    map[string]agentView{},
		stopping: map[string]bool{},
		loading:  map[logKey]bool{},
		tickFn:   tick,

		focused:   true,
		focus:     paneLog,
		notified:  map[string]uint64{},
		seenAsked: map[string]uint64{},
		view:      viewState{frames: &frames{}},
	}
	m.ink = inksOf(st, m.table.Styles.NeedsYou)
	m.table.KeyMap = agenttable.KeyMapOf(keys)
	m.table.EmptyHint = "press " + keys.Spawn.Help().Key + " to spawn one"
	m.log.KeyMap = logview.KeyMapOf(keys)
	m.table.SetStopping(m.stopping)
	m.initHosts(s)
	m.setAgents(s.Agents())
	m.startOnAnAgent()
	// What needed you before this dashboard started is marked, not rung.
	m.restored = map[string]bool{}
	for _, a := range m.agents {
		if a.NeedsYou != nil {
			m.notified[a.AgentID] = a.NeedsYou.Seq
		}
		if a.Restored {
			m.restored[a.AgentID] = true
		}
	}
	return m
}

// Init spawns the --spawn agents, one after the other, starts the clock
// when agents run, and asks the terminal for its background when the
// dashboard draws in colour (background.go).
func (m Model) Init() tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.opts.Spawn)+1)
	for _, msg := range m.opts.Spawn {
		spawn := m.opCmd(opSpawn, "", msg, false)
		cmds = append(cmds, func() tea.Msg {
			done := spawn().(opDoneMsg)
			done.startup = true
			return done
		})
	}
	var bg tea.Cmd
	if !m.styles.NoColor && !m.styles.Options.Fixed {
		bg = tea.RequestBackgroundColor
	}
	return tea.Batch(tea.Sequence(cmds...), m.startTick(), waitHostErr(m.opts.HostErrors), bg)
}

// Messages produced by commands.
type (
	// opDoneMsg reports the end of an operation.
	opDoneMsg struct {
		op     op
		id     string // the agent operated on (the new agent for spawn)
		status proto.Status
		err    error
		// startup is set for --spawn agents, which do not take the
		// selection.
		startup bool
		// queued: queue kept the message; dropped: the operation dropped
		// a queued message (SPEC §11); receipt, note: a steer's.
		queued, dropped bool
		receipt, note   string
		// below is how many descendants a close, resume or forget took
		// with the agent (SPEC §14).
		below int
		// cancelled is the head of the queued message a cancel dropped
		// (the last), left how many stay queued.
		cancelled string
		left      int
		// spawn is the number of a spawn typed here (Model.spawns), 0
		// for one at startup.
		spawn int
		// named is the task name a spawn gave (the snapshot may come
		// after the reply).
		named string
		// message is a named spawn's message, kept for the input a
		// refused name reopens.
		message string
		// host is the host a spawn went to, with several (SPEC §9).
		host string
	}
	// pageMsg carries the items the log pane asked for (fetchLog).
	pageMsg struct {
		key  logKey
		req  logview.Request
		page logview.Page
		err  error
	}
	// scanMsg carries the host's answer to the log pane's Scan: the
	// matching items in [scan.From, to).
	scanMsg struct {
		key     logKey
		scan    logview.Scan
		matches []int64
		to      int64
		err     error
	}
	// tickMsg advances the spinner and elapsed times.
	tickMsg time.Time
	// pagerDoneMsg reports that the pager ended.
	pagerDoneMsg struct{ err error }
	// shutdownMsg reports that every running submission ended.
	shutdownMsg struct{ err error }
)

// setAgents takes a new snapshot of the agents (the model owns the
// slice; the table reads it): the index, the filter's verdicts and the
// table's rows are made again. Cost: O(agents); a change of agents in
// place goes through agentsChanged.
func (m *Model) setAgents(agents []proto.AgentInfo) {
	m.agents, m.view.count = agents, proto.CountAgents(agents)
	m.at = make(map[string]int, len(agents))
	for i := range agents {
		m.at[agents[i].AgentID] = i
	}
	m.findAmbiguous()
	m.refreshRows()
	m.settled()
}

// agentsChanged takes the changes of m.agents[i] for each i in changed,
// made in place (same agents, same order): only their filter verdicts
// are made again, and the table's rows only when a change touches them
// (agenttable.Model.Changed), and the agents counted again with recount.
// It reports whether the table's order was made again. Cost: O(changes).
func (m *Model) agentsChanged(changed []int, recount bool) bool {
	if m.match != nil {
		for _, i := range changed {
			if was, now := m.match[i], m.filter.match(m.agents[i]); was != now {
				m.match[i] = now
				m.matchN += map[bool]int{true: 1, false: -1}[now]
			}
		}
	}
	m.table.SetClock(m.now(), m.frame)
	rebuilt := m.table.Changed(changed)
	if recount {
		m.view.count = proto.CountAgents(m.agents)
	}
	m.settled()
	if rebuilt {
		m.needChanged()
	}
	return rebuilt
}

// settled forgets the stops the snapshot no longer needs shown and
// selects the agent this dashboard spawned once it is there.
func (m *Model) settled() {
	for id := range m.stopping {
		if a, ok := m.agent(id); !ok || !a.Running() {
			delete(m.stopping, id)
		}
	}
	if m.pending != "" && m.table.Select(m.pending) {
		m.pending = ""
	}
}

// refreshRows gives the table the agents again with the filter's
// verdicts (the filter or the agents changed), and the host's tree.
func (m *Model) refreshRows() {
	m.match, m.matchN = nil, len(m.agents)
	if m.filter.active() {
		m.match, m.matchN = make([]bool, len(m.agents)), 0
		for i := range m.agents {
			if m.match[i] = m.filter.match(m.agents[i]); m.match[i] {
				m.matchN++
			}
		}
	}
	m.table.SetClock(m.now(), m.frame)
	m.table.SetTree(m.cfg.Has(proto.FeatureTree))
	m.table.SetInner(m.cfg.Has(proto.FeatureInnerAgents))
	m.table.SetActivity(m.cfg.Has(proto.FeatureOutputRate))
	m.table.SetAgents(m.agents, m.match)
	m.needChanged()
}

// Update handles a message: window size, keys by focus, supervisor changes
// and the results of commands.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.view.still = false // an update that changes nothing on screen says so (onChanges)
	nm, cmd := m.update(msg)
	// Whatever moved the log pane or changed what it shows: fetch what it
	// needs to draw, and scan what its search has not looked at, in
	// commands.
	nm.tilesSettle()
	fetch, scan := nm.fetchLog(), nm.scanLog()
	if tf := nm.fetchTiles(); tf != nil {
		fetch = tea.Batch(fetch, tf)
	}
	// Whatever changed the selection, the focus or the agents: the agent
	// on screen no longer needs you (SPEC §11).
	seen := nm.seenCmd()
	nm.stamp(fetch == nil && scan == nil)
	if fetch == nil && scan == nil && seen == nil {
		return nm, cmd
	}
	return nm, tea.Batch(cmd, fetch, scan, seen)
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.FocusMsg:
		m.focused = true
		return m, nil
	case tea.BlurMsg:
		m.focused = false
		return m, nil
	case notifyMsg:
		if msg.err != nil {
			m.say(levelWarn, "cannot write the notification to the terminal: "+msg.err.Error())
		}
		return m, nil
	case seenMsg:
		if msg.err != nil && proto.CodeOf(msg.err) != proto.CodeNotFound {
			m.say(levelWarn, m.describe("mark seen", msg.id, msg.err))
		}
		return m, nil
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		if m.lay.tooSmall {
			return m, nil
		}
		m.syncLog(false)
		return m, nil
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.PasteMsg:
		return m, m.onPaste(msg)
	case tea.MouseMsg:
		return m, m.onMouse(msg)
	case tea.BackgroundColorMsg:
		m.onBackground(msg.IsDark())
		return m, nil
	case ChangesMsg:
		return m, m.onChanges(msg)
	case opDoneMsg:
		return m, m.onOpDone(msg)
	case closeShownMsg:
		return m, m.onCloseShown(msg)
	case messageMsg:
		return m, m.onMessage(msg)
	case editedMsg:
		return m, m.onEdited(msg)
	case storageMsg:
		if msg.err != nil {
			m.say(levelError, "logs: "+msg.err.Error())
		}
		m.storage, m.storageHost = msg.storage, msg.host
		return m, nil
	case approvalDoneMsg:
		return m, m.onApprovalDone(msg)
	case questionDoneMsg:
		return m, m.onQuestionDone(msg)
	case pageMsg:
		m.onPage(msg)
		return m, nil
	case scanMsg:
		m.onScan(msg)
		return m, nil
	case tilesMsg:
		m.onTiles(msg)
		return m, nil
	case agenttable.FoldMsg:
		m.say(levelInfo, msg.Text)
		return m, nil
	case logview.SearchMsg:
		m.onSearchSaid(msg.Err)
		return m, nil
	case tickMsg:
		return m, m.onTick()
	case pagerDoneMsg:
		if msg.err != nil {
			m.say(levelError, m.pagerFailed(msg.err))
		}
		m.syncLog(false)
		return m, nil
	case shutdownMsg:
		m.shutdownErr = msg.err
		return m, tea.Quit
	case hostErrMsg:
		return m, m.onHostErr(msg)
	}
	return m, m.onAcross(msg) // the search across agents', if its own
}

// say shows a reply on the message line.
func (m *Model) say(l level, text string) {
	m.reply = reply{level: l, text: text, at: m.now()}
}

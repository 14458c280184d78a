package transcript

import (
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/termtext"
)

// claudeTask is a system/task_* frame of claude's stream (task_started,
// task_progress, task_updated, task_notification; SPEC §8 "Inner
// agents"): the members read of each.
type claudeTask struct {
	Subtype     string `json:"subtype"`
	TaskID      string `json:"task_id"`
	ToolUseID   string `json:"tool_use_id"`
	Description string `json:"description"`
	TaskType    string `json:"task_type"`
	Status      string `json:"status"`
	Summary     string `json:"summary"`
	LastTool    string `json:"last_tool_name"`
	Usage       *struct {
		TotalTokens int64 `json:"total_tokens"`
		ToolUses    int   `json:"tool_uses"`
		DurationMS  int64 `json:"duration_ms"`
	} `json:"usage"`
	Patch *struct {
		Status string `json:"status"`
	} `json:"patch"`
}

// InnerAgent is an inner agent as the parser read it (SPEC §8 "Inner
// agents"); the supervisor turns it into a InnerAgent, whose fields
// these are (Status in subdash's words, the Inner* constants below).
type InnerAgent struct {
	TaskID, ParentTaskID, Description, TaskType string
	Status, CLIStatus, LastTool, Summary        string
	ToolCount                                   int
	Tokens, ElapsedMS                           int64
	StartedAt, EndedAt                          time.Time // EndedAt zero while it runs
}

// The statuses of an inner agent in subdash's words (InnerAgent).
const (
	InnerRunning     = "running"
	InnerCompleted   = "completed"
	InnerInterrupted = "interrupted" // stopped or killed, or its process's output ended first
	InnerErrored     = "errored"     // the CLI said it failed
)

// innerState follows the inner agents of one claude process.
type innerState struct {
	agents []InnerAgent
	byTask map[string]int // task_id -> index in agents
	// byCall maps an Agent call's tool_use id to the task it started;
	// callParent maps the id of a tool_use made inside an inner agent to
	// that inner agent's Agent call (its frame's parent_tool_use_id).
	byCall     map[string]string
	callParent map[string]string
	now        func() time.Time
	// callDepth is the depth of the frame that made each tool call inside
	// an inner agent, taskCall each task's Agent call (claude_indent.go).
	callDepth map[string]int
	taskCall  map[string]string
	held      []heldTask // task_started entries waiting for their call (claude_indent.go)
	// names holds how the task of each id is named in words (taskWords);
	// told, the words said of a task, keyed by its id and the words.
	names map[string]string
	told  map[string]bool
}

// SetClock sets the clock that stamps inner agents' start and end
// (time.Now when unset); tests use it for fixed output.
func (p *Parser) SetClock(now func() time.Time) { p.inner.now = now }

// InnerAgents returns a copy of the inner agents the CLI reported so far,
// in the order they started (SPEC §8). Only claude reports any.
func (p *Parser) InnerAgents() []InnerAgent {
	if len(p.inner.agents) == 0 {
		return nil
	}
	return append([]InnerAgent(nil), p.inner.agents...)
}

func (s *innerState) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// claudeToolParent remembers that tool_use id was made inside the inner
// agent whose Agent call is parent, so that a task it starts (before or
// after this frame) is that inner agent's child.
func (p *Parser) claudeToolParent(id, parent string) {
	if id == "" || parent == "" {
		return
	}
	s := &p.inner
	s.noteCall(id, parent)
	if task, ok := s.byCall[id]; ok {
		// claude writes the task_started before the frame of the call
		if a := &s.agents[s.byTask[task]]; a.ParentTaskID == "" {
			a.ParentTaskID = s.byCall[parent]
		}
		return
	}
	if s.callParent == nil {
		s.callParent = map[string]string{}
	}
	s.callParent[id] = parent
}

// claudeTask applies one task_* frame and returns what it says in words
// (taskWords; "" when it says nothing new). A task_started of another
// task_type (local_bash: a shell command) is not an inner agent; frames
// of a task never started here change no inner agent.
func (p *Parser) claudeTask(line []byte) string {
	var t claudeTask
	if !decode(line, &t) {
		return ""
	}
	p.applyTask(&t)
	return p.inner.taskWords(&t)
}

// applyTask applies task_* frame t to the inner agents.
func (p *Parser) applyTask(t *claudeTask) {
	if t.TaskID == "" {
		return
	}
	s := &p.inner
	if t.Subtype == "task_started" {
		if t.TaskType != "local_agent" && t.TaskType != "local_workflow" {
			return
		}
		if _, seen := s.byTask[t.TaskID]; seen {
			return
		}
		if s.byTask == nil {
			s.byTask, s.byCall = map[string]int{}, map[string]string{}
		}
		a := InnerAgent{
			TaskID: t.TaskID, TaskType: t.TaskType, Status: InnerRunning,
			Description: termtext.OneLine(t.Description, MaxSummaryRunes),
			StartedAt:   s.clock(),
		}
		if call := s.callParent[t.ToolUseID]; call != "" {
			a.ParentTaskID = s.byCall[call]
		}
		s.byCall[t.ToolUseID] = t.TaskID
		s.byTask[t.TaskID] = len(s.agents)
		s.agents = append(s.agents, a)
		return
	}
	i, ok := s.byTask[t.TaskID]
	if !ok {
		return
	}
	a := &s.agents[i]
	if u := t.Usage; u != nil {
		a.Tokens, a.ElapsedMS = u.TotalTokens, u.DurationMS
		a.ToolCount = max(a.ToolCount, u.ToolUses)
	}
	switch t.Subtype {
	case "task_progress":
		if t.LastTool != "" {
			a.LastTool = termtext.OneLine(t.LastTool, MaxSummaryRunes)
		}
	case "task_updated":
		if t.Patch != nil && t.Patch.Status != "" {
			s.end(a, t.Patch.Status)
		}
	case "task_notification":
		if t.Summary != "" {
			a.Summary = termtext.OneLine(t.Summary, MaxSummaryRunes)
		}
		if t.Status != "" {
			s.end(a, t.Status)
		}
	}
}

// end records the CLI's status word cli for a, in subdash's words too; a
// "running" or "pending" word does not end it.
func (s *innerState) end(a *InnerAgent, cli string) {
	a.CLIStatus = termtext.OneLine(cli, MaxSummaryRunes)
	switch strings.ToLower(cli) {
	case "running", "pending":
		a.Status = InnerRunning
		return
	case "completed":
		a.Status = InnerCompleted
	case "stopped", "killed":
		a.Status = InnerInterrupted
	default: // failed, error and words not seen yet
		a.Status = InnerErrored
	}
	if a.EndedAt.IsZero() {
		a.EndedAt = s.clock()
	}
}

// endInner ends the inner agents still running when the process's output
// ends: they ended with it (interrupted; the CLI said nothing more).
func (s *innerState) endInner() {
	for i := range s.agents {
		if a := &s.agents[i]; a.Status == InnerRunning {
			a.Status = InnerInterrupted
			a.EndedAt = s.clock()
		}
	}
}

// taskWords says task_* frame t in words, for its transcript entry (SPEC
// §8): `inner agent “audit ui” started`, `inner agent “audit ui”:
// Running tests`, `inner agent “audit ui” killed`, `shell command “sleep
// 30” completed`. It returns "" for a frame that says nothing new: a
// task_updated without a status, or words already said of its task
// (claude writes the same task_notification twice when a task is killed,
// and a task_updated and a task_notification of the same end).
func (s *innerState) taskWords(t *claudeTask) string {
	name := s.taskName(t)
	var text string
	switch t.Subtype {
	case "task_started":
		return name + " started"
	case "task_progress":
		switch d, tool := termtext.OneLine(t.Description, MaxSummaryRunes), termtext.OneLine(t.LastTool, MaxSummaryRunes); {
		case d != "":
			text = name + ": " + d
		case tool != "":
			text = name + ": used " + tool
		default:
			text = name + " is working"
		}
	case "task_updated":
		if t.Patch == nil || termtext.OneLine(t.Patch.Status, 0) == "" {
			return ""
		}
		text = name + " " + strings.ToLower(termtext.OneLine(t.Patch.Status, MaxSummaryRunes))
	default: // task_notification
		status := strings.ToLower(termtext.OneLine(t.Status, MaxSummaryRunes))
		if status == "" {
			status = "reported"
		}
		text = name + " " + status
		if sum := termtext.OneLine(t.Summary, MaxSummaryRunes); sum != "" && !strings.Contains(name, "“"+sum+"”") {
			text += ": " + sum
		}
	}
	key := t.TaskID + "\n" + text
	if s.told[key] {
		return ""
	}
	if s.told == nil {
		s.told = map[string]bool{}
	}
	s.told[key] = true
	return text
}

// taskName names the task of frame t in words: what it is (an inner
// agent, a shell command, a task) and its description, as its
// task_started said them; for a task not started here, as the frame says.
func (s *innerState) taskName(t *claudeTask) string {
	if n, ok := s.names[t.TaskID]; ok {
		return n
	}
	what := "task"
	switch t.TaskType {
	case "local_agent", "local_workflow":
		what = "inner agent"
	case "local_bash":
		what = "shell command"
	}
	d := termtext.OneLine(t.Description, MaxSummaryRunes)
	if t.Subtype != "task_started" {
		d = termtext.OneLine(t.Summary, MaxSummaryRunes)
		if i, ok := s.byTask[t.TaskID]; ok {
			what, d = "inner agent", s.agents[i].Description
		}
	}
	name := what
	switch {
	case d != "":
		name += " “" + d + "”"
	case t.TaskID != "":
		name += " " + termtext.OneLine(t.TaskID, MaxSummaryRunes)
	}
	if t.Subtype == "task_started" && t.TaskID != "" {
		if s.names == nil {
			s.names = map[string]string{}
		}
		s.names[t.TaskID] = name
	}
	return name
}

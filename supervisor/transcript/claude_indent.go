package transcript

import "encoding/json"

// The depth of claude's frames (SPEC §8 "Inner agents"): a frame with a
// parent_tool_use_id belongs to the inner agent that Agent call started,
// one level below the frame that made the call; the task_* frames of an
// inner agent are at its level. Entry.Depth carries it, so a transcript
// shows an inner agent's tool calls, results and prompt indented under
// the Agent call that started it.

// maxDepth bounds the depth given to an entry (claude nests two deep).
const maxDepth = 8

// depthOf returns the depth of the frames whose parent_tool_use_id is
// call: 0 for none, else one below the frame that made the call.
func (s *innerState) depthOf(call string) int {
	if call == "" {
		return 0
	}
	return min(s.callDepth[call]+1, maxDepth)
}

// noteCall records that tool call id was made in a frame whose
// parent_tool_use_id is parent (claudeToolParent).
func (s *innerState) noteCall(id, parent string) {
	if id == "" || parent == "" {
		return // a call of the agent itself: depth 0, not kept
	}
	if s.callDepth == nil {
		s.callDepth = map[string]int{}
	}
	s.callDepth[id] = s.depthOf(parent)
}

// indent gives entries, made of a frame whose parent_tool_use_id is
// call, the frame's depth.
func (s *innerState) indent(call string, entries []Entry) []Entry {
	if d := s.depthOf(call); d > 0 {
		for i := range entries {
			entries[i].Depth = d
		}
	}
	return entries
}

// taskDepth returns the depth of a task_* frame (line): that of the
// frames of the inner agent it is about, whose Agent call is call; for
// another task (local_bash) that of the frame that made its call, and
// call "".
func (s *innerState) taskDepth(line []byte) (depth int, call string) {
	var t struct {
		TaskID    string `json:"task_id"`
		ToolUseID string `json:"tool_use_id"`
	}
	if json.Unmarshal(line, &t) != nil {
		return 0, ""
	}
	if t.ToolUseID == "" {
		t.ToolUseID = s.taskCall[t.TaskID]
	}
	if _, ok := s.byTask[t.TaskID]; !ok || t.ToolUseID == "" {
		return s.callDepth[t.ToolUseID], "" // a shell command's task: at the depth of its call
	}
	if s.taskCall == nil {
		s.taskCall = map[string]string{}
	}
	s.taskCall[t.TaskID] = t.ToolUseID
	return s.depthOf(t.ToolUseID), t.ToolUseID
}

// An inner agent started by another inner agent: claude writes its
// task_started before the frame of the Agent call that started it, so
// its depth is not known yet (it would show one level short). That entry
// is held until the call's frame comes and goes out after the call's
// entries, at the call's depth; after maxHold lines, or at the end of
// the output, it goes out as it is.

// maxHold is how many lines, its own counted, a task_started waits for
// the frame of its Agent call.
const maxHold = 4

// heldTask is a task_started entry waiting for the frame of call.
type heldTask struct {
	entry Entry
	call  string
	lines int
}

// hold keeps e, the task_started entry of the inner agent of Agent call
// call, when that call's frame is not in yet (made says whether it is),
// and reports whether it did.
func (s *innerState) hold(e Entry, call string, made bool) bool {
	if call == "" || made {
		return false
	}
	s.held = append(s.held, heldTask{entry: e, call: call})
	return true
}

// release appends to out, a line's entries, the held entries whose call
// is now made (made reports it), or that waited maxHold lines; all, at
// the end of the output, every one. Each goes out at its call's depth.
func (s *innerState) release(out []Entry, made func(call string) bool, all bool) []Entry {
	keep := s.held[:0]
	for _, h := range s.held {
		h.lines++
		if all || h.lines >= maxHold || made(h.call) {
			h.entry.Depth = s.depthOf(h.call)
			out = append(out, h.entry)
			continue
		}
		keep = append(keep, h)
	}
	s.held = keep
	return out
}

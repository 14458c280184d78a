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
// frames of the inner agent it is about; for another task (local_bash)
// that of the frame that made its call.
func (s *innerState) taskDepth(line []byte) int {
	var t struct {
		TaskID    string `json:"task_id"`
		ToolUseID string `json:"tool_use_id"`
	}
	if json.Unmarshal(line, &t) != nil {
		return 0
	}
	if t.ToolUseID == "" {
		t.ToolUseID = s.taskCall[t.TaskID]
	}
	if _, ok := s.byTask[t.TaskID]; !ok || t.ToolUseID == "" {
		return s.callDepth[t.ToolUseID] // a shell command's task: at the depth of its call
	}
	if s.taskCall == nil {
		s.taskCall = map[string]string{}
	}
	s.taskCall[t.TaskID] = t.ToolUseID
	return s.depthOf(t.ToolUseID)
}

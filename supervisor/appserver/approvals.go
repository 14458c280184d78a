package appserver

import (
	"encoding/json"
	"strings"
)

// Approvals (SPEC §12). With --approvals the app-server asks before a
// command runs (item/commandExecution/requestApproval), a patch applies
// (item/fileChange/requestApproval) or the sandbox widens
// (item/permissions/requestApproval), as the thread's approval policy
// says; each request waits for its answer while its turn goes on waiting.
// codex's decisions: accept, acceptForSession, decline (the agent goes on
// without it: the model reads that the user declined; a decline carries
// no reason) and cancel (the turn ends too), of which subdash sends the
// first three. A permissions request is answered with the permissions it
// asked for, for the turn or (allow always) the session, or none. Every
// other request of the app-server's own (a question for the user, an MCP
// elicitation, a dynamic tool call) is refused with an error answer, so
// that no turn waits for an answer nobody gives.

// The approval requests.
const (
	MethodCommandApproval     = "item/commandExecution/requestApproval"
	MethodFileChangeApproval  = "item/fileChange/requestApproval"
	MethodPermissionsApproval = "item/permissions/requestApproval"
)

// IsApproval reports whether method is one of the approval requests.
func IsApproval(method string) bool {
	switch method {
	case MethodCommandApproval, MethodFileChangeApproval, MethodPermissionsApproval:
		return true
	}
	return false
}

// ApprovalRequest is the params of the approval requests, the fields of
// all three together.
type ApprovalRequest struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	// Reason is codex's reason for asking, when it gives one.
	Reason string `json:"reason"`
	// commandExecution: the command and where it runs.
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
	// fileChange: the root it asks to write under, when it asks that.
	GrantRoot string `json:"grantRoot"`
	// permissions: what it asks for (fileSystem, network).
	Permissions json.RawMessage `json:"permissions"`
}

// RequestKey is the key of a request id of the app-server's own, as
// subdash names the request (PendingApproval.RequestID): a string id as
// it is, a number as its digits.
func RequestKey(id json.RawMessage) string { return idKey(id) }

// FileChangeSummary says what a file change does in one line: "update
// a.go, add b.go".
func FileChangeSummary(changes []FileChange) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		parts = append(parts, c.Kind.Type+" "+c.Path)
	}
	return strings.Join(parts, ", ")
}

// request is a request of the app-server's own that waits for an answer.
type request struct {
	id     json.RawMessage
	method string
	params ApprovalRequest
}

// request handles a request of the app-server's own (line as it came).
func (d *Driver) request(m Message, line []byte) []Event {
	key := idKey(m.ID)
	raw := append([]byte(nil), line...)
	if !IsApproval(m.Method) {
		d.refuse(m.ID, -32601, "subdash does not answer "+m.Method+" requests")
		return []Event{{Kind: EventDeclined, RequestID: key, Method: m.Method, Line: raw,
			Text: "refused: subdash answers no " + m.Method + " request"}}
	}
	r := &request{id: append(json.RawMessage(nil), m.ID...), method: m.Method}
	m.Body(&r.params)
	if !d.cfg.Approvals {
		d.respond(r.id, answer(r, Deny))
		return []Event{{Kind: EventDeclined, RequestID: key, Method: m.Method, Line: raw,
			Text: "declined: the host relays no approvals (start it with --approvals to answer them)"}}
	}
	d.requests[key] = r
	return []Event{{Kind: EventApproval, RequestID: key, Method: m.Method, Line: raw, Files: d.files[r.params.ItemID]}}
}

// Decision is a person's answer to an approval request.
type Decision int

// The decisions (SPEC §12: allow, allow always, deny).
const (
	Deny Decision = iota
	Allow
	AllowAlways
)

// Answer answers the pending request key with decision. It reports false
// when key is not pending (answered, withdrawn) or stdin closed.
func (d *Driver) Answer(key string, decision Decision) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.requests[key]
	if r == nil || d.closed {
		return false
	}
	delete(d.requests, key)
	d.respond(r.id, answer(r, decision))
	return true
}

// answer is the result that answers r with decision.
func answer(r *request, decision Decision) any {
	if r.method == MethodPermissionsApproval {
		granted, scope := json.RawMessage(`{}`), "turn"
		switch decision {
		case AllowAlways:
			scope = "session"
			fallthrough
		case Allow:
			if len(r.params.Permissions) > 0 {
				granted = r.params.Permissions
			}
		}
		return map[string]any{"permissions": granted, "scope": scope}
	}
	word := "decline"
	switch decision {
	case Allow:
		word = "accept"
	case AllowAlways:
		word = "acceptForSession"
	}
	return map[string]any{"decision": word}
}

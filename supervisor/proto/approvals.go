package proto

// PendingApproval is a tool permission request of an agent that waits for
// an answer (SPEC §12), as list, the dashboard and viewers show it.
type PendingApproval struct {
	// RequestID is the CLI's id of the request; every answer names it.
	RequestID string `json:"request_id"`
	// Tool is the tool the agent wants to use, e.g. "Bash".
	Tool string `json:"tool"`
	// Summary is the tool input in one line (the command, the file path).
	Summary string `json:"summary"`
	// Description is what the CLI says the call does; "" when it says nothing.
	Description string `json:"description,omitempty"`
	// SubmissionID is the submission that asked.
	SubmissionID string `json:"submission_id"`
	// RequestedAt is when the request arrived.
	RequestedAt Time `json:"requested_at"`
}

// ApprovalResult is the result of Approve and Deny: the request answered and
// how.
type ApprovalResult struct {
	AgentID   string `json:"agent_id"`
	RequestID string `json:"request_id"`
	Tool      string `json:"tool"`
	Summary   string `json:"summary"`
	// Decision is "allow", "allow_always" (the tool is allowed for the rest
	// of the agent's session) or "deny".
	Decision string `json:"decision"`
	// Message is the reason given with a denial, as the agent reads it.
	Message string `json:"message,omitempty"`
}

// The decisions of an ApprovalResult.
const (
	DecisionAllow       = "allow"
	DecisionAllowAlways = "allow_always"
	DecisionDeny        = "deny"
)

// ApprovalActivity is the activity of an agent whose oldest pending request
// is p: "needs approval: <tool> <one-line input>" (SPEC §12).
func ApprovalActivity(p PendingApproval) string {
	act := "needs approval: " + p.Tool
	if p.Summary != "" {
		act += " " + p.Summary
	}
	return act
}

// Attention says that an agent needs the user (SPEC §11): it reached a
// final state, or asks for approval (SPEC §12), since it was last looked
// at. Summary.NeedsYou carries it; nil means the agent does not need you.
type Attention struct {
	// Reason is why: the final status it took ("completed", "errored",
	// "closed"), "approval" or "stalled".
	Reason string `json:"reason"`
	// Since is when it started needing you; the dashboard's jump key
	// visits the oldest first.
	Since Time `json:"since"`
	// Seq numbers the transition, increasing across all agents of a host:
	// a dashboard raises one notification per (agent, Seq) it has not seen
	// before, so a transition is announced at most once (SPEC §11).
	Seq uint64 `json:"seq"`
	// Text is a short one-line summary for notifications: no control
	// characters, at most MaxAttentionText characters, never starting with
	// a digit (some terminals read OSC 9;<digit>… as a progress report).
	Text string `json:"text"`
}

// ReasonApproval is Attention.Reason for an agent that asks for approval
// of a tool (SPEC §12).
const ReasonApproval = "approval"

// ReasonStalled is Attention.Reason for a running agent that turned
// stalled (SPEC §11 "Stalled"): no output, no event and no CPU time for
// --stall-after. The notify command gets it as SUBDASH_STATUS.
const ReasonStalled = "stalled"

// MaxAttentionText bounds Attention.Text, in characters.
const MaxAttentionText = 160

package proto

import "slices"

// HostConfig is what a dashboard shows of the host it works on (SPEC §2,
// §9): the host dashboard gets it from its supervisor, a viewer from the
// host's GET /v1/info and /v1/config. It holds copies; the caller owns its
// slices.
type HostConfig struct {
	// Command is the agent command as screens show it: this binary by its
	// name ("subdash agent"), a preset's command line, or --command.
	Command string
	// MaxAgents is the limit of running submissions (SPEC §2).
	MaxAgents int
	// Dir is the working directory of the host's agents.
	Dir string
	// Where names the machine of a host a viewer reaches over ssh: the
	// target (ssh://buildbox/src/app, SPEC §9), which the dashboard's
	// title shows; "" for a host on this machine.
	Where string
	// PresetName, PresetArgs and PresetFormat name the host's preset
	// (SPEC §8); all "" for an agent command. PresetFormat is the CLI's
	// machine-readable output format, "" for plain text.
	PresetName, PresetArgs, PresetFormat string
	// Approvals says the host relays tool permission requests to a person
	// (--approvals, SPEC §12).
	Approvals bool
	// Warnings are problems with the host's configuration that did not
	// stop it (an invalid MEMO_SUBAGENT_MAX_AGENTS); Notes are facts worth
	// showing (memo not found, the built-in agent is used; for a viewer,
	// first, that it is attached). Shown in the status line and help.
	Warnings, Notes []string
	// Features are the words of what the host takes (the Feature
	// constants): those of its control protocol (Protocol2Features) and
	// those it lists beyond (Info.Features); a front-end hides what its
	// host cannot do (Has).
	Features []string
	// MaxBudgetUSD and FleetBudgetUSD are the host's --max-budget-usd and
	// --fleet-budget-usd (SPEC §11 "Budgets"); 0: none, or an older host.
	MaxBudgetUSD, FleetBudgetUSD float64
	// ReadOnly says the dashboard is a viewer attached with --read-only
	// (SPEC §9): every operation is refused (ErrReadOnly).
	ReadOnly bool
}

// Has reports whether the host takes feature, one of the Feature words: a
// host of an older subdash lists fewer, or none.
func (c HostConfig) Has(feature string) bool { return slices.Contains(c.Features, feature) }

// Structured reports whether the host's preset writes structured output
// that becomes transcripts (SPEC §8).
func (c HostConfig) Structured() bool { return c.PresetFormat != "" }

// The feature words of HostConfig.Features: each names a capability a
// front-end offers only when its host has it. Every host of control
// protocol 2 has those below (Protocol2Features), so its GET /v1/info
// lists none of them. A capability added from now on adds its word here,
// to HostFeatures once the host takes it (Info.Features lists it: the
// protocol grows additively, behind feature words, SPEC §6), and a Has
// check where a front-end offers it.
const (
	// FeatureTextMessage: spawn (POST /v1/agents) and send (POST
	// /v1/agents/{id}/send?interrupt=1|queue=1) take the message itself
	// as a text/plain body, which the host streams to the message's file,
	// instead of a JSON body: a long message then never sits whole in
	// either side's memory.
	FeatureTextMessage = "text-message"
	// FeatureTree: agents have task names, paths and parents (Summary's
	// task_name, agent_path, parent_id), spawn takes a task_name, close,
	// resume and forget take the subtree, targets may be paths, and
	// several messages may be queued (queued_messages) (SPEC §14).
	FeatureTree = "tree"
	// FeatureMultiAgent: the routes of the multi-agent MCP family
	// (/v1/multi-agent/…, SPEC §14) with a root mailbox per session.
	FeatureMultiAgent = "multi-agent"
	// FeatureCloseMany: POST /v1/close closes a set of agents (every open
	// one, those of a status, or listed ids) in one call, all their
	// process groups terminated at once (SPEC §3 close).
	FeatureCloseMany = "close-many"
	// FeatureResendFile: POST /v1/agents/{id}/resend {interrupt, queue}
	// sends again the whole message of the agent's latest submission,
	// which the host reads from its kept .msg file (SPEC §10), and GET
	// /v1/agents/{id}/message streams it: a long message never crosses
	// the socket to be resent, nor sits whole in the host's memory.
	FeatureResendFile = "resend-file"
	// FeatureInnerAgents: Summary carries inner_agents, the subagents an
	// agent CLI started inside a submission (SPEC §8 "Inner agents").
	FeatureInnerAgents = "inner-agents"
	// FeatureSteer: send takes steer (POST /v1/agents/{id}/send?steer=1,
	// `ctl send --steer`): a message written into a running agent that
	// takes messages while it runs, with a receipt per message
	// (Summary's steered_messages, SPEC §11).
	FeatureSteer = "steer"
	// FeatureOutputRate: Summary carries output_rate, the bytes of output
	// per bucket of the latest submission over the last minutes (SPEC §7
	// the activity column).
	FeatureOutputRate = "output-rate"
	// FeatureSearch: search across agents, GET /v1/search (Searcher,
	// SPEC §6).
	FeatureSearch = "search"
	// FeatureChanges: each submission's changes to its work tree
	// (Summary.Changes, SubmissionInfo.Changes) and GET
	// /v1/agents/{id}/diff (Differ, SPEC §15).
	FeatureChanges = "changes"
	// FeatureLogCap: the host caps each submission's log files
	// (--max-log-size), keeps a free-space floor, says what is missing
	// (Summary.LogDropped, marker lines, the raw log's LogGapsHeader).
	FeatureLogCap = "log-cap"
	// FeatureStall: a running agent with no output, no event and no CPU
	// time for the host's --stall-after is marked stalled (Summary's
	// stalled_since, needs-you reason "stalled", SPEC §11 "Stalled").
	FeatureStall = "stall"
	// FeatureBudget: the host may have --max-budget-usd and
	// --fleet-budget-usd (refusals with code budget), its info carries
	// spend and Summary run_cost_usd and budget_reached (SPEC §11
	// "Budgets").
	FeatureBudget = "budget"
	// FeatureOutputBatch: GET /v1/events?outputs=batch sends the output
	// notices of a batch as one event (outputs) instead of one output
	// event per agent.
	FeatureOutputBatch = "output-batch"
	// FeatureFollowWindow: GET /v1/events?outputs=batch&window=1 names
	// its stream (a stream event) and PUT /v1/events/{stream}/follow
	// names the submission a viewer follows; each batch in which its
	// output changed then carries its last n display lines (a window
	// event), so a following viewer fetches no window per frame.
	FeatureFollowWindow = "follow-window"
	// FeatureCountsInterval: GET /v1/events?outputs=batch&window=1&counts=
	// (a Go duration) sends the output counts of agents other than the one
	// the stream follows at most once per that interval; everything else
	// (snapshots, forgets, warnings, the followed agent's output) still
	// goes at the stream's frame. A viewer asks for ViewerCountsInterval.
	FeatureCountsInterval = "counts-interval"
	// FeatureNow: Summary carries now, what the agent is doing now or how
	// it ended in one line, and output events carry it too (SPEC §7, the
	// table's NOW column).
	FeatureNow = "now"
	// FeatureFollowMany: POST /v1/windows reads several windows of
	// lines or transcript entries in one request (WindowsReader): a
	// viewer's tiles (SPEC §7 "Tiles") fetch what they draw once a frame.
	FeatureFollowMany = "follow-many"
	// FeatureQuestions: Summary carries pending_questions (an agent's
	// AskUserQuestion, SPEC §12 "Questions") and POST
	// /v1/agents/{id}/answer answers one.
	FeatureQuestions = "questions"
)

// Protocol2Features returns the feature words every host of control
// protocol 2 has, which its Info.Features does not list: a front-end's
// HostConfig holds them for every host it works on. The caller owns the
// slice.
func Protocol2Features() []string {
	return []string{FeatureTextMessage, FeatureTree, FeatureMultiAgent, FeatureLogCap, FeatureCloseMany, FeatureResendFile, FeatureInnerAgents, FeatureSteer, FeatureSearch, FeatureChanges, FeatureStall, FeatureBudget, FeatureOutputRate, FeatureOutputBatch, FeatureFollowWindow, FeatureCountsInterval}
}

// HostFeatures returns the feature words a host of this build lists in
// GET /v1/info (Info.Features): what it takes beyond protocol 2. The
// caller owns the slice.
func HostFeatures() []string { return []string{FeatureNow, FeatureFollowMany, FeatureQuestions} }

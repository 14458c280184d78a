package wire

import (
	"net/url"
	"strings"
)

// Route is one route of the control socket (SPEC §6): its method and path
// pattern (http.ServeMux's syntax: {id} is an agent, {stream} an event
// stream), the operation it carries, and, in SPEC §6's words, what it
// takes and answers. The server registers a handler for each route of
// Routes; a client calls a route by its value (Route.At).
type Route struct {
	Method string // GET, POST, PUT or DELETE
	Path   string // "/v1/agents/{id}/send"
	// Op names the operation (SPEC §3's word where it has one: "send" for
	// a resend, "close" for many agents at once); a read-only viewer
	// refuses a route that Changes agents in its name ("send refused").
	Op      string
	Changes bool
	// Takes is the query or body the route takes ("" for none), Answers
	// what it answers: the two columns of SPEC §6's route table.
	Takes, Answers string
}

// Pattern is the route as http.ServeMux registers it:
// "POST /v1/agents/{id}/send".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Target is a route with its path filled in: what a client requests.
type Target struct {
	Route
	URL string // the path and query: "/v1/agents/a1b2/send?queue=1"
}

// At returns r with its {id} or {stream} set to name and the query q
// (nil: none). name is escaped so that any text reaches the host
// unchanged (and gets its "agent not found"): "." is escaped too, or the
// router would clean it away, and "" is sent as a space, which the host
// trims. A route without a name in its path ignores name.
func (r Route) At(name string, q url.Values) Target {
	path := r.Path
	if i := strings.IndexByte(path, '{'); i >= 0 {
		j := i + strings.IndexByte(path[i:], '}')
		if name == "" {
			name = " "
		}
		path = path[:i] + strings.ReplaceAll(url.PathEscape(name), ".", "%2E") + path[j+1:]
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return Target{Route: r, URL: path}
}

// The routes of the control socket, in the order of SPEC §6's table.
var (
	Info = Route{Method: "GET", Path: "/v1/info", Op: "info",
		Answers: "the host: `{pid, dir, socket, command, max_agents, run_dir, logs, restored, protocol, kind, viewers, features, failure, warnings, spend}` (`failure`: the journal could not be written; `warnings`: the host's warnings, oldest first)"}
	Config = Route{Method: "GET", Path: "/v1/config", Op: "config",
		Answers: "`{config, preset_name, preset_args, preset_format}`: the host's settings, for a viewer (§9)"}
	List = Route{Method: "GET", Path: "/v1/agents", Op: "list",
		Answers: "list (§3): `{agents: [summary…], failure}`"}
	Spawn = Route{Method: "POST", Path: "/v1/agents", Op: "spawn", Changes: true,
		Takes:   "`{message, task_name}`, or the message as text/plain with `?task_name=`",
		Answers: "spawn (§3), status 201"}
	Send = Route{Method: "POST", Path: "/v1/agents/{id}/send", Op: "send", Changes: true,
		Takes:   "`{message, interrupt, queue, steer}`, or the message as text/plain with `?interrupt=1`, `?queue=1` or `?steer=1`",
		Answers: "send (§3; `queue` and `steer`: §11)"}
	Resend = Route{Method: "POST", Path: "/v1/agents/{id}/resend", Op: "send", Changes: true,
		Takes:   "`{interrupt, queue}`",
		Answers: "send of the latest message again, read from its kept file (§10)"}
	Message = Route{Method: "GET", Path: "/v1/agents/{id}/message", Op: "message",
		Takes:   "`?submission=N`",
		Answers: "the whole message, as text"}
	Interrupt = Route{Method: "POST", Path: "/v1/agents/{id}/interrupt", Op: "interrupt", Changes: true,
		Answers: "interrupt (§3): `{agent_id, status, dropped_queued_message}`"}
	Close = Route{Method: "POST", Path: "/v1/agents/{id}/close", Op: "close", Changes: true,
		Answers: "close (§3): `{agent_id, status, descendants, dropped_queued_message}`"}
	CloseMany = Route{Method: "POST", Path: "/v1/close", Op: "close", Changes: true,
		Takes:   "`{all: true}`, `{status}` or `{agent_ids}`",
		Answers: "close of each agent selected, with its descendants, every process group terminated at once: `{closed, dropped_queued_message}`"}
	Resume = Route{Method: "POST", Path: "/v1/agents/{id}/resume", Op: "resume", Changes: true,
		Answers: "resume (§3), as close answers"}
	Forget = Route{Method: "POST", Path: "/v1/agents/{id}/forget", Op: "forget", Changes: true,
		Answers: "forget (§10), as close answers"}
	Seen = Route{Method: "POST", Path: "/v1/agents/{id}/seen", Op: "seen",
		Answers: "a dashboard shows the agent: it no longer needs you (§11); `{agent_id, status}`"}
	CancelQueue = Route{Method: "DELETE", Path: "/v1/agents/{id}/queue", Op: "cancel queue", Changes: true,
		Answers: "the agent's queued message dropped (§11): `{agent_id, status, dropped_queued_message}`"}
	Approve = Route{Method: "POST", Path: "/v1/agents/{id}/approve", Op: "approve", Changes: true,
		Takes:   "`{request_id, always}` (no `request_id`: the oldest)",
		Answers: "the tool permission request allowed (§12): `{agent_id, request_id, tool, summary, decision}`"}
	Deny = Route{Method: "POST", Path: "/v1/agents/{id}/deny", Op: "deny", Changes: true,
		Takes:   "`{request_id, message}`",
		Answers: "the request denied, `message` the reason the agent reads (§12), as approve answers"}
	Answer = Route{Method: "POST", Path: "/v1/agents/{id}/answer", Op: "answer", Changes: true,
		Takes:   "`{request_id, answers: {question: [label…]}}` (no `request_id`: the oldest; feature `questions`)",
		Answers: "the agent's question answered (§12 Questions): `{agent_id, request_id, answers: {question: answer}}`"}
	Wait = Route{Method: "POST", Path: "/v1/wait", Op: "wait",
		Takes:   "`{ids, timeout_ms}`",
		Answers: "wait (§3): `{status, details, timed_out}`; it stops waiting when the client goes away"}
	Logs = Route{Method: "GET", Path: "/v1/agents/{id}/logs", Op: "logs",
		Takes:   "`?submission=N&raw=1`",
		Answers: "the log as plain text (a preset's transcript as text), a marker line where output is missing (§5); with `raw=1` the bytes it holds, the gaps in a `Subdash-Log-Gaps` header: `[{at, bytes, cap, low_space}]`"}
	Window = Route{Method: "GET", Path: "/v1/agents/{id}/window", Op: "window",
		Takes:   "`?submission=N&from=F&n=K`",
		Answers: "`{first, total, lines: [{text, stderr, partial}]}`: display lines (printable text and SGR) from F; `from=-1`: the last K"}
	Transcript = Route{Method: "GET", Path: "/v1/agents/{id}/transcript", Op: "transcript",
		Takes:   "`?submission=N&from=F&n=K`",
		Answers: "`{structured, first, total, entries, pending}`: transcript entries (§8) as `window` answers lines"}
	Windows = Route{Method: "POST", Path: "/v1/windows", Op: "windows",
		Takes:   "`{windows: [{agent_id, submission, transcript, from, n}]}` (at most 64; feature `follow-many`)",
		Answers: "`{windows: [...]}`, one per request in its order: `window`'s answer, `transcript`'s with `transcript`, or `{error, code}` for that one alone: several agents' windows in one request (a viewer's tiles, §7)"}
	LogSearch = Route{Method: "GET", Path: "/v1/agents/{id}/search", Op: "log search",
		Takes:   "`?submission=N&q=Q&from=F&transcript=1`",
		Answers: "`{matches: [line…], to}`: the lines (entries) from F whose text holds Q (case ignored when Q is lower case)"}
	Lines = Route{Method: "GET", Path: "/v1/agents/{id}/lines", Op: "lines",
		Takes:   "`?submission=N&sgr=1`",
		Answers: "every display line as text, streamed: what the pager shows"}
	Diff = Route{Method: "GET", Path: "/v1/agents/{id}/diff", Op: "diff",
		Takes:   "`?submission=N&color=1`",
		Answers: "the unified diff of what the submission changed in its git work tree, streamed (§15)"}
	Search = Route{Method: "GET", Path: "/v1/search", Op: "search",
		Takes:   "`?q=Q&agent=ID&regex=1&limit=N&after_agent=&after_seq=&after_line=`",
		Answers: "JSON Lines, streamed as found: `{agent_id, agent_path, seq, line, text}` a hit, then `{hits, truncated, notes}`; blank lines keep a long search alive; `after_*` resumes after a hit"}
	Events = Route{Method: "GET", Path: "/v1/events", Op: "events",
		Takes:   "`?viewer=1&frame=D&outputs=batch&window=1&counts=D`",
		Answers: "server-sent events: `agent` (one agent's snapshot, every agent first), `synced`, `output` (or, with `outputs=batch`, one `outputs` a batch), `warning`, and with `window=1` first `stream` and then `window` (§9); a comment every 3 s"}
	Follow = Route{Method: "PUT", Path: "/v1/events/{stream}/follow", Op: "follow",
		Takes:   "`{agent_id, submission, n}`",
		Answers: "what the event stream follows from now on, the same object: its `window` events carry that submission's last n lines (§9)"}
	TreeSpawn = Route{Method: "POST", Path: "/v1/multi-agent/spawn", Op: "spawn_agent", Changes: true,
		Takes:   "`{message, task_name}`",
		Answers: "the new agent (§14): `{agent_id, agent_path, task_name, status, last_message, error}`"}
	TreeMessage = Route{Method: "POST", Path: "/v1/multi-agent/message", Op: "send_message", Changes: true,
		Takes:   "`{target, message, trigger}` (`trigger`: followup_task)",
		Answers: "the receiver, as spawn_agent answers"}
	TreeInterrupt = Route{Method: "POST", Path: "/v1/multi-agent/interrupt", Op: "interrupt_agent", Changes: true,
		Takes:   "`{target}`",
		Answers: "the agent and its status before, as spawn_agent answers"}
	TreeWait = Route{Method: "POST", Path: "/v1/multi-agent/wait", Op: "wait_agent",
		Takes:   "`{timeout_ms, ack}`",
		Answers: "the caller's mailbox: `{items, timed_out, activity}`"}
	TreeList = Route{Method: "GET", Path: "/v1/multi-agent/agents", Op: "list_agents",
		Takes:   "`?path_prefix=P`",
		Answers: "`{agents: [{agent_id, agent_path, task_name, status, last_message, error}]}`"}
)

// Routes is every route of the control socket, in the order of SPEC §6's
// table. The caller must not change it.
var Routes = []Route{
	Info, Config, List, Spawn, Send, Resend, Message, Interrupt, Close, CloseMany, Resume, Forget, Seen, CancelQueue,
	Approve, Deny, Answer, Wait, Logs, Window, Transcript, Windows, LogSearch, Lines, Diff, Search, Events, Follow,
	TreeSpawn, TreeMessage, TreeInterrupt, TreeWait, TreeList,
}

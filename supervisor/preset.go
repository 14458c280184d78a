package supervisor

import (
	"fmt"
	"sort"
	"strings"
)

// Preset runs a known agent CLI as the agent command, continuing the same
// agent's conversation across submissions (SPEC §8).
type Preset struct {
	// Name is one of the names of Presets.
	Name string
	// Args are the --preset-args, appended to the CLI's arguments (before
	// codex's "resume <thread> -", as codex wants its exec flags first).
	Args string
	// Format is the CLI's machine-readable output format, "" for plain text.
	Format string
	// Approvals relays the CLI's tool permission requests to a person
	// (--approvals, SPEC §12; claude only): the claude command gets
	// ApprovalArgs, and stdin carries stream-json until the final result.
	Approvals bool
	// executable is this binary's path, for the builtin preset.
	executable string
}

// Presets lists the preset names of SPEC §8.
var Presets = []string{"claude", "codex", "gemini", "memo", "builtin"}

// LookupPreset returns the preset called name with extra CLI arguments args.
// An unknown name is an error listing the known ones.
func LookupPreset(name, args, executable string) (*Preset, error) {
	p := &Preset{Name: strings.ToLower(strings.TrimSpace(name)), Args: strings.TrimSpace(args), executable: executable}
	switch p.Name {
	case "claude", "codex", "gemini":
		p.Format = p.Name
	case "memo", "builtin":
	default:
		known := append([]string(nil), Presets...)
		sort.Strings(known)
		return nil, fmt.Errorf("unknown preset %q; use one of %s", name, strings.Join(known, ", "))
	}
	return p, nil
}

// ApprovalArgs are the claude arguments --approvals adds (SPEC §12): the
// message goes as stream-json on stdin, and tool permission requests come
// as control requests on stdout, answered on stdin.
const ApprovalArgs = "--input-format stream-json --permission-prompt-tool stdio"

// Structured reports whether the preset's output is JSON lines to be parsed
// into a transcript.
func (p *Preset) Structured() bool { return p != nil && p.Format != "" }

// Describe returns the preset's first-submission command line with a
// placeholder session id, for the status line.
func (p *Preset) Describe() string {
	cmd, _ := p.CommandFor("<agent_id>", "")
	return cmd
}

// CommandFor returns the shell command line for a submission of the agent
// agentID. session is the agent's established session (claude/gemini: the
// agent id once a run has started it; codex: the thread id read from
// thread.started); "" starts a new session. It also returns the session id
// the command will establish ("" when unknown until the CLI says so).
func (p *Preset) CommandFor(agentID, session string) (cmd, sessionID string) {
	extra := ""
	if p.Args != "" {
		extra = " " + p.Args
	}
	switch p.Name {
	case "claude":
		if p.Approvals {
			extra = " " + ApprovalArgs + extra
		}
		if session != "" {
			return "claude -p --output-format stream-json --verbose --resume " + shellQuote(session) + extra, session
		}
		return "claude -p --output-format stream-json --verbose --session-id " + shellQuote(agentID) + extra, agentID
	case "gemini":
		if session != "" {
			return `gemini -p "" --output-format stream-json --resume ` + shellQuote(session) + extra, session
		}
		return `gemini -p "" --output-format stream-json --session-id ` + shellQuote(agentID) + extra, agentID
	case "codex":
		if session != "" {
			return "codex exec --json --skip-git-repo-check" + extra + " resume " + shellQuote(session) + " -", session
		}
		return "codex exec --json --skip-git-repo-check" + extra + " -", ""
	case "memo":
		return "memo --dangerous" + extra, ""
	default: // builtin
		return BuiltinCommand(p.executable) + extra, ""
	}
}

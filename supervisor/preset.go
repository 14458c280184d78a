package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/subdash/subdash/supervisor/internal/memohome"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Preset runs a known agent CLI as the agent command, continuing the same
// agent's conversation across submissions (SPEC §8).
type Preset struct {
	// Name is one of the names of Presets.
	Name string
	// Args are the --preset-args, appended to the CLI's arguments (before
	// codex exec's "resume <thread> -", as codex wants its exec flags
	// first).
	Args string
	// Format is the CLI's machine-readable output format, "" for plain text.
	Format string
	// Approvals relays the CLI's tool permission requests to a person
	// (--approvals, SPEC §12; claude and codex): the claude command gets
	// ApprovalArgs, and stdin carries stream-json until the final result;
	// codex's threads run with approval policy "untrusted" (appserver).
	Approvals bool
	// executable is this binary's path, for the builtin preset.
	executable string
}

// Presets lists the preset names of SPEC §8.
var Presets = []string{"claude", "codex", "codex-exec", "gemini", "memo", "builtin"}

// LookupPreset returns the preset called name with extra CLI arguments args.
// An unknown name is an error listing the known ones.
func LookupPreset(name, args, executable string) (*Preset, error) {
	p := &Preset{Name: strings.ToLower(strings.TrimSpace(name)), Args: strings.TrimSpace(args), executable: executable}
	switch p.Name {
	case "claude", "codex", "gemini", "memo":
		p.Format = p.Name
	case "codex-exec":
		p.Format = "codex"
	case "builtin":
	default:
		known := append([]string(nil), Presets...)
		sort.Strings(known)
		return nil, fmt.Errorf("unknown preset %q; use one of %s", name, strings.Join(known, ", "))
	}
	return p, nil
}

// SteerArgs are the claude arguments of every submission (SPEC §8, §11
// steer): the message goes as stream-json on stdin, which stays open so
// that steered messages reach the running turn, and each one taken is
// echoed back (its receipt).
const SteerArgs = "--input-format stream-json --replay-user-messages"

// ApprovalArgs are the claude arguments of every submission (SPEC §12):
// SteerArgs, and tool permission requests and questions come as control
// requests on stdout, answered on stdin. Without --approvals a permission
// request is denied at once as claude denies it without a prompt tool;
// questions are always relayed.
const ApprovalArgs = SteerArgs + " --permission-prompt-tool stdio"

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
// agent id once a run has started it; codex: the thread id of its
// app-server's thread/start, or of codex exec's thread.started; memo: the
// id of the session its latest run wrote in the agent's own MEMO_HOME,
// which --prev continues); "" starts a new session. It also returns the
// session id the command will establish ("" when unknown until the CLI
// says so). The codex app-server's command is the same for both: the
// thread goes in its thread/resume request (codex.go).
func (p *Preset) CommandFor(agentID, session string) (cmd, sessionID string) {
	extra := ""
	if p.Args != "" {
		extra = " " + p.Args
	}
	switch p.Name {
	case "claude":
		// always the prompt tool: claude offers AskUserQuestion only
		// with it (SPEC §12 "Questions")
		extra = " " + ApprovalArgs + extra
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
		return "codex app-server" + extra, session
	case "codex-exec":
		if session != "" {
			return "codex exec --json --skip-git-repo-check" + extra + " resume " + shellQuote(session) + " -", session
		}
		return "codex exec --json --skip-git-repo-check" + extra + " -", ""
	case "memo":
		if session != "" {
			return "memo --dangerous --prev" + extra, ""
		}
		return "memo --dangerous" + extra, ""
	default: // builtin
		return BuiltinCommand(p.executable) + extra, ""
	}
}

// CLI returns the name of the preset's executable: codex for codex-exec,
// "" for builtin.
func (p *Preset) CLI() string {
	switch p.Name {
	case "codex-exec":
		return "codex"
	case "builtin":
		return ""
	}
	return p.Name
}

// name returns p's name, "" for nil (a plain agent command).
func (p *Preset) name() string {
	if p == nil {
		return ""
	}
	return p.Name
}

// isMemo reports whether p is the memo preset.
func (p *Preset) isMemo() bool { return p != nil && p.Name == "memo" }

// memoHomeName is the folder of a memo agent's own MEMO_HOME, beside the
// logs of its first submission: <run dir>/<agent id>/memo-home (SPEC §8).
const memoHomeName = "memo-home"

// memoRun is what a memo submission on the local runner knows of its
// agent's Memo home (SPEC §8): the home, and the session files it held
// when the submission started, so that the one the run writes is found.
type memoRun struct {
	home   string
	before memohome.Snapshot
}

// prepareMemo readies a memo submission before it starts (launch calls it
// without s.mu). On the local runner: the user's Memo config must declare
// a provider (memohome.CheckConfig), the agent's own Memo home is made or
// refreshed (memohome.Prepare), its session files are noted, and the
// command continues with --prev exactly when that home holds a session of
// the working directory. On another runner Memo's session files stay where
// the submission runs: every submission starts a new conversation, and a
// later one says so. The error stops the submission from starting.
func (s *Supervisor) prepareMemo(a *agent, sub *submission) error {
	if a.home == "" { // not the local runner
		if sub.seq > 1 {
			sub.note("memo on --runner "+a.runner+" starts a new conversation for every submission: its session files stay where it runs, out of the host's reach", transcript.KindNote)
		}
		return nil
	}
	user := memohome.UserHome(environGetter(s.cfg.Environ))
	if err := memohome.CheckConfig(user); err != nil {
		return err
	}
	if err := memohome.Prepare(a.home, user); err != nil {
		return err
	}
	prev := memohome.HasSession(a.home, s.cfg.Dir)
	session := ""
	if prev {
		session = "prev"
	}
	cmd, _ := a.preset.CommandFor(a.id, session)
	s.mu.Lock()
	sub.memo = &memoRun{home: a.home, before: memohome.Sessions(a.home)}
	gone := !prev && a.sessionID != ""
	sub.command = cmd
	s.mu.Unlock()
	switch {
	case gone:
		sub.note("memo's sessions of this agent are gone from "+filepath.Join(a.home, "sessions")+"; this submission starts a new conversation", transcript.KindNote)
	case !prev && sub.seq > 1:
		s.newSessionNote(a, sub)
	}
	return nil
}

// decide applies the session file the run wrote to oc and used: where it
// holds a turn's end, it decides the outcome, the answer and the tokens
// (SPEC §8), over what stdout said; its id is the agent's session from now
// on, which the next submission continues. Without one (the run ended
// before its session began) stdout's outcome stands. m may be nil.
func (m *memoRun) decide(oc *outcome, used *proto.Usage) {
	if m == nil {
		return
	}
	path := memohome.NewSession(m.home, m.before)
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	sess, err := transcript.ReadMemoSession(f)
	f.Close() //nolint:errcheck // read only: its Close cannot lose data
	if err != nil {
		return
	}
	if sess.ID != "" {
		oc.sessionID = sess.ID
	}
	if o := sess.Outcome; o.Final {
		oc.final, oc.success, oc.err, oc.events = true, o.Success, o.Error, true
		if o.Answer != "" {
			oc.answer = o.Answer
		}
		*used = proto.Usage{InputTokens: o.InputTokens, OutputTokens: o.OutputTokens}
	}
}

// environGetter returns a getenv over env ("KEY=value" entries, the last
// one of a key winning, as for a process started with env).
func environGetter(env []string) func(string) string {
	return func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
				return v
			}
		}
		return ""
	}
}

// BuiltinCommand returns the command line of the built-in audit agent:
// the shell-quoted path of this binary followed by "agent".
func BuiltinCommand(executable string) string {
	return shellQuote(executable) + " agent"
}

// shellQuote quotes s for /bin/sh when it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

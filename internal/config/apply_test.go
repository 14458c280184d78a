package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func positive(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return errors.New("is not a positive number")
	}
	return nil
}

func known(v string) error {
	if !slices.Contains(presets, v) {
		return errors.New("is not a preset")
	}
	return nil
}

var env = map[string][]EnvVar{
	"max-agents": {{Name: "MEMO_SUBAGENT_MAX_AGENTS", Check: positive}},
	"command":    {{Name: "MEMO_SUBAGENT_COMMAND", Check: func(string) error { return nil }}},
	"preset":     {{Name: "SUBDASH_PRESET", Check: known}},
}

// run loads text, parses args on a command's flags and applies the file
// under them with the environment vars.
func run(t *testing.T, text string, args []string, vars map[string]string) (*pflag.FlagSet, *Applied) {
	t.Helper()
	f, err := load(t, text)
	if err != nil {
		t.Fatal(err)
	}
	fs := flags()
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	a, err := Apply(fs, f, env, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return fs, a
}

func value(fs *pflag.FlagSet, name string) string { return fs.Lookup(name).Value.String() }

// TestApplyPrecedence: flags, then the environment, then the file, then
// the defaults (SPEC §2).
func TestApplyPrecedence(t *testing.T) {
	const file = "max-agents = 2\ngrace = \"3s\"\nnotify = \"osc\"\n"
	for _, c := range []struct {
		name       string
		args       []string
		vars       map[string]string
		maxAgents  string
		source     string
		grace      string
		warnings   int
		warningHas string
	}{
		{"file", nil, nil, "2", "config.toml line 1", "3s", 0, ""},
		{"flag beats all", []string{"--max-agents", "5"}, map[string]string{"MEMO_SUBAGENT_MAX_AGENTS": "7"}, "5", "flag", "3s", 0, ""},
		{"environment beats the file", nil, map[string]string{"MEMO_SUBAGENT_MAX_AGENTS": "7"}, "0", "environment MEMO_SUBAGENT_MAX_AGENTS", "3s", 0, ""},
		{"invalid environment: the file, with a warning", nil, map[string]string{"MEMO_SUBAGENT_MAX_AGENTS": "x"}, "2", "config.toml line 1", "3s", 1,
			`MEMO_SUBAGENT_MAX_AGENTS="x" is not a positive number; using max-agents = 2 from `},
		{"flag for another setting", []string{"--grace", "1s"}, nil, "2", "config.toml line 1", "1s", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, a := run(t, file, c.args, c.vars)
			if got := value(fs, "max-agents"); got != c.maxAgents {
				t.Errorf("max-agents %s, want %s (the environment's is left for Resolve)", got, c.maxAgents)
			}
			if got := a.Source("max-agents").String(); !strings.HasSuffix(got, c.source) {
				t.Errorf("max-agents from %q, want %q", got, c.source)
			}
			if got := value(fs, "grace"); got != c.grace {
				t.Errorf("grace %s, want %s", got, c.grace)
			}
			if len(a.Warnings) != c.warnings || c.warnings > 0 && !strings.Contains(a.Warnings[0], c.warningHas) {
				t.Errorf("warnings %q, want %d saying %q", a.Warnings, c.warnings, c.warningHas)
			}
			if fs.Changed("max-agents") && c.args == nil || fs.Changed("grace") && c.args == nil {
				t.Error("a setting of the file made its flag changed: it would count as the command line's")
			}
		})
	}
}

// TestApplyAgentCommand: the agent command is one setting: --command or
// --preset, or either variable, keep both of the file's out; an invalid
// SUBDASH_PRESET lets the file's apply, with a warning.
func TestApplyAgentCommand(t *testing.T) {
	for _, c := range []struct {
		name            string
		text            string
		args            []string
		vars            map[string]string
		command, preset string
		warn            bool
	}{
		{"file preset", "preset = \"codex\"\n", nil, nil, "", "codex", false},
		{"--command keeps the file's preset out", "preset = \"codex\"\n", []string{"--command", "cat"}, nil, "cat", "", false},
		{"--preset keeps the file's command out", "command = \"cat\"\n", []string{"--preset", "claude"}, nil, "", "claude", false},
		{"MEMO_SUBAGENT_COMMAND keeps the file's preset out", "preset = \"codex\"\n", nil, map[string]string{"MEMO_SUBAGENT_COMMAND": "cat"}, "", "", false},
		{"SUBDASH_PRESET keeps the file's command out", "command = \"cat\"\n", nil, map[string]string{"SUBDASH_PRESET": "gemini"}, "", "", false},
		{"an invalid SUBDASH_PRESET lets the file's command apply", "command = \"cat\"\n", nil, map[string]string{"SUBDASH_PRESET": "claud"}, "cat", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, a := run(t, c.text, c.args, c.vars)
			if value(fs, "command") != c.command || value(fs, "preset") != c.preset {
				t.Errorf("command %q preset %q, want %q %q", value(fs, "command"), value(fs, "preset"), c.command, c.preset)
			}
			if (len(a.Warnings) > 0) != c.warn {
				t.Errorf("warnings %q, want some: %v", a.Warnings, c.warn)
			}
		})
	}
}

// TestApplyPresetArgs: [presets.NAME] args become --preset-args for the
// preset in effect, from any source, unless --preset-args is given.
func TestApplyPresetArgs(t *testing.T) {
	const file = "[presets.claude]\nargs = \"--model sonnet\"\n[presets.codex]\nargs = \"-c x\"\n"
	for _, c := range []struct {
		name string
		text string
		args []string
		vars map[string]string
		want string
	}{
		{"flag preset", file, []string{"--preset", "claude"}, nil, "--model sonnet"},
		{"environment preset", file, nil, map[string]string{"SUBDASH_PRESET": "codex"}, "-c x"},
		{"file preset", "preset = \"codex\"\n" + file, nil, nil, "-c x"},
		{"--preset-args wins", file, []string{"--preset", "claude", "--preset-args", "--x"}, nil, "--x"},
		{"no preset", file, nil, nil, ""},
		{"another preset", file, []string{"--preset", "gemini"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, _ := run(t, c.text, c.args, c.vars)
			if got := value(fs, "preset-args"); got != c.want {
				t.Errorf("preset-args %q, want %q", got, c.want)
			}
		})
	}
}

// TestBlame: an error naming a flag the file set says the file's line.
func TestBlame(t *testing.T) {
	_, a := run(t, "\ngrace = \"3s\"\nkube-env = [\"A\"]\n", []string{"--max-agents", "2"}, nil)
	for _, c := range []struct{ err, want string }{
		{"invalid --grace -1s: must not be negative", "invalid --grace -1s: must not be negative (grace from "},
		{"--kube-* flags need --runner kubernetes", "(kube-env from "},
		{"invalid --max-agents 0", "invalid --max-agents 0"},
	} {
		got := a.Blame(errors.New(c.err)).Error()
		if !strings.Contains(got, c.want) {
			t.Errorf("Blame(%q) = %q, want %q", c.err, got, c.want)
		}
		if strings.Contains(c.want, "from") && !strings.Contains(got, "config.toml line") {
			t.Errorf("Blame(%q) = %q names no line", c.err, got)
		}
	}
	if got := a.Blame(errors.New("invalid --max-agents 0")).Error(); strings.Contains(got, "config.toml") {
		t.Errorf("Blame blamed the file for a flag: %q", got)
	}
}

package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// EnvVar is an environment variable that gives a flag's setting (SPEC
// §2: MEMO_SUBAGENT_MAX_AGENTS gives --max-agents).
type EnvVar struct {
	Name string // MEMO_SUBAGENT_MAX_AGENTS
	// Check returns nil when the value (trimmed, not empty) applies, else
	// what is wrong with it ("is not a positive number"): then it is a
	// warning and the next source applies.
	Check func(v string) error
}

// Kind is where a setting came from.
type Kind int

// The sources of a setting, strongest first (SPEC §2).
const (
	Default Kind = iota
	FromFlag
	FromEnv
	FromFile
)

// Source is where a setting in effect came from.
type Source struct {
	Kind Kind
	Env  string // the variable, with FromEnv
	Path string // the file, with FromFile
	Line int    // the line, with FromFile
}

// String says where: "flag", "environment MEMO_SUBAGENT_MAX_AGENTS",
// "~/.config/subdash/config.toml line 3", "default".
func (s Source) String() string {
	switch s.Kind {
	case FromFlag:
		return "flag"
	case FromEnv:
		return "environment " + s.Env
	case FromFile:
		return fmt.Sprintf("%s line %d", s.Path, s.Line)
	}
	return "default"
}

// Applied is what Apply did to one command's flags.
type Applied struct {
	// File is the file applied.
	File *File
	// Sources are where each flag of the command got its setting: a flag
	// missing here is Default.
	Sources map[string]Source
	// Warnings are the environment's values that did not apply (SPEC
	// §2): each says what was used instead. The caller shows them as it
	// shows Resolve's.
	Warnings []string
}

// Source returns where flag name's setting came from.
func (a *Applied) Source(name string) Source { return a.Sources[name] }

// agentCommand are the flags that give SPEC §2's agent command: one
// setting, whichever of them says it.
var agentCommand = []string{"command", "preset"}

// Apply lays f's settings under the command line's and the environment's
// on fs, the flags of the command being run, after fs was parsed: a
// setting of f is set on its flag (fl.Value.Set, which leaves the flag
// unchanged as the command line's) unless the command line gave the flag
// or one of env's variables for it holds a value that applies. The agent
// command is one setting: --command or --preset on the command line, or
// SUBDASH_PRESET or MEMO_SUBAGENT_COMMAND, keep both of the file's command
// and preset out. A variable whose value does not apply is a warning
// naming the file's line used instead (with no line in the file, the
// caller's resolution says what it uses). f's settings for flags fs lacks
// (another command's) are left alone. The preset's [presets.NAME] args
// become --preset-args when that flag is not given and preset names the
// preset in effect. Errors: a value fs's flag refuses, naming the line.
func Apply(fs *pflag.FlagSet, f *File, env map[string][]EnvVar, getenv func(string) string) (*Applied, error) {
	a := &Applied{File: f, Sources: map[string]Source{}}
	fs.Visit(func(fl *pflag.Flag) { a.Sources[fl.Name] = Source{Kind: FromFlag} })
	groupOf := func(name string) []string {
		if isAgentCommand(name) {
			return agentCommand
		}
		return []string{name}
	}
	byFlag := func(name string) bool {
		for _, n := range groupOf(name) {
			if a.Sources[n].Kind == FromFlag {
				return true
			}
		}
		return false
	}
	for name, vars := range env {
		if fs.Lookup(name) == nil || byFlag(name) {
			continue
		}
		for _, v := range vars {
			if val := strings.TrimSpace(getenv(v.Name)); val != "" && v.Check(val) == nil {
				a.Sources[name] = Source{Kind: FromEnv, Env: v.Name}
				break
			}
		}
	}
	given := func(names ...string) Kind {
		for _, n := range names {
			if k := a.Sources[n].Kind; k != Default {
				return k
			}
		}
		return Default
	}
	for _, st := range f.Settings {
		fl := fs.Lookup(st.Name)
		if fl == nil {
			continue
		}
		group := groupOf(st.Name)
		if given(group...) != Default {
			continue
		}
		src := Source{Kind: FromFile, Path: f.Path, Line: st.Line}
		for _, n := range group {
			for _, v := range env[n] {
				if val := strings.TrimSpace(getenv(v.Name)); val != "" {
					if err := v.Check(val); err != nil {
						a.Warnings = append(a.Warnings, fmt.Sprintf("%s=%q %v; using %s = %s from %s", v.Name, val, err, st.Name, strings.Join(st.Values, ", "), src))
					}
				}
			}
		}
		for _, v := range st.Values {
			if err := fl.Value.Set(v); err != nil {
				return a, fmt.Errorf("%s: %s = %q: %v", src, st.Name, v, err)
			}
		}
		a.Sources[st.Name] = src
	}
	applyPresetArgs(fs, f, a, getenv, env)
	return a, nil
}

func isAgentCommand(name string) bool { return name == "command" || name == "preset" }

// applyPresetArgs sets --preset-args from [presets.NAME] for the preset in
// effect, when the command line gave no --preset-args.
func applyPresetArgs(fs *pflag.FlagSet, f *File, a *Applied, getenv func(string) string, env map[string][]EnvVar) {
	args := fs.Lookup("preset-args")
	if args == nil || args.Changed || len(f.Presets) == 0 {
		return
	}
	name := ""
	switch src := a.Sources["preset"]; src.Kind {
	case FromFlag, FromFile:
		name = fs.Lookup("preset").Value.String()
	case FromEnv:
		name = getenv(src.Env)
	}
	p, ok := f.Presets[strings.ToLower(strings.TrimSpace(name))]
	if !ok || p.Line == 0 {
		return
	}
	if err := args.Value.Set(p.Args); err == nil {
		a.Sources["preset-args"] = Source{Kind: FromFile, Path: f.Path, Line: p.Line}
	}
}

// flagInError finds the flags an error names ("invalid --grace -1s").
var flagInError = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// Blame adds to err where the file set each flag err names that the
// file gave (Resolve's errors name the flags: "invalid --grace -1s: must
// not be negative (grace = "-1s" at ~/.config/subdash/config.toml line
// 4)"), so that a bad setting of the file is found by its line. err
// unchanged otherwise; nil for nil.
func (a *Applied) Blame(err error) error {
	if err == nil || a == nil {
		return err
	}
	var at []string
	seen := map[string]bool{}
	for _, m := range flagInError.FindAllStringSubmatch(err.Error(), -1) {
		names := []string{m[1]}
		if prefix := m[1]; strings.HasSuffix(prefix, "-") { // "--kube-*": every flag of the family
			names = nil
			for name := range a.Sources {
				if strings.HasPrefix(name, prefix) {
					names = append(names, name)
				}
			}
			slices.Sort(names)
		}
		for _, name := range names {
			if src := a.Sources[name]; src.Kind == FromFile && !seen[name] {
				seen[name] = true
				at = append(at, fmt.Sprintf("%s from %s", name, src))
			}
		}
	}
	if len(at) == 0 {
		return err
	}
	return blamed{err, strings.Join(at, ", ")}
}

// blamed is an error with where the file gave its settings.
type blamed struct {
	error
	at string
}

// Error says what is wrong and where: "<what> (<file>:<line>)".
func (b blamed) Error() string { return fmt.Sprintf("%v (%s)", b.error, b.at) }

// Unwrap returns what is wrong, without where.
func (b blamed) Unwrap() error { return b.error }

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/internal/config"
	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/mcpserver"
	"github.com/subdash/subdash/theme"
)

// The config file under the command line (package config): which
// variables give which flag, and what a command takes from the file.

// envVars are the environment variables that give a flag's setting (SPEC
// §2), with what makes a value apply: the file's setting stands below
// them, and one that does not apply is a warning.
var envVars = map[string][]config.EnvVar{
	"command":    {{Name: "MEMO_SUBAGENT_COMMAND", Check: func(string) error { return nil }}},
	"preset":     {{Name: "SUBDASH_PRESET", Check: checkPreset}},
	"max-agents": {{Name: "MEMO_SUBAGENT_MAX_AGENTS", Check: positive}},
	"max-depth":  {{Name: "MEMO_SUBAGENT_MAX_DEPTH", Check: positive}},
	"tools":      {{Name: "SUBDASH_MCP_TOOLS", Check: checkTools}},
	"state-dir":  {{Name: "SUBDASH_STATE_DIR", Check: func(string) error { return nil }}},
	"socket":     {{Name: "SUBDASH_SOCKET", Check: func(string) error { return nil }}},
}

func positive(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return errors.New("is not a positive number")
	}
	return nil
}

func checkPreset(v string) error {
	if _, err := supervisor.LookupPreset(v, "", ""); err != nil {
		return fmt.Errorf("is not a preset (%s)", strings.Join(supervisor.Presets, ", "))
	}
	return nil
}

func checkTools(v string) error {
	if _, err := mcpserver.ParseFamily(v); err != nil {
		return fmt.Errorf("is not a tool family (%s, %s)", mcpserver.FamilySeed, mcpserver.FamilyMultiAgent)
	}
	return nil
}

// fileFlags returns a flag set of every flag the config file may set, as
// every command declares it, for config.Load to check the file with.
func fileFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	commonFlags(fs, &hostFlags{})
	dashboardFlags(fs, &dashFlags{})
	declareMCP(fs, &mcpFlags{})
	return fs
}

// loadConfig reads the config file (config.Path). Its errors are usage
// errors (exit 2), each naming the file's line.
func loadConfig() (*config.File, error) {
	f, err := config.Load(config.Path(os.Getenv), config.Schema{Flags: fileFlags(), Presets: supervisor.Presets})
	if err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

// applyConfig loads the config file and lays it under cmd's flags
// (config.Apply). Errors are usage errors.
func applyConfig(cmd *cobra.Command) (*config.Applied, error) {
	f, err := loadConfig()
	if err != nil {
		return nil, err
	}
	a, err := config.Apply(cmd.Flags(), f, envVars, os.Getenv)
	if err != nil {
		return nil, usageError{err}
	}
	return a, nil
}

// checkHost checks the host settings given on the command line or in the
// file that Resolve would take for "not given" (0, ""), naming the flag
// and, for the file's, its line.
func checkHost(o supervisor.Options, a *config.Applied) error {
	given := func(name string) bool {
		k := a.Source(name).Kind
		return k == config.FromFlag || k == config.FromFile
	}
	var err error
	switch {
	case given("max-agents") && o.MaxAgents < 1:
		err = fmt.Errorf("invalid --max-agents %d: must be a positive number", o.MaxAgents)
	case given("max-depth") && o.MaxDepth < 1:
		err = fmt.Errorf("invalid --max-depth %d: must be a positive number", o.MaxDepth)
	case given("scrollback") && o.Scrollback < 1:
		err = fmt.Errorf("invalid --scrollback %d: must be a positive number of lines", o.Scrollback)
	case given("command") && strings.TrimSpace(o.Command) == "":
		err = fmt.Errorf("--command is empty; give the agent command to run, or leave the flag out to use the default")
	}
	if err != nil {
		return usageError{a.Blame(err)}
	}
	return nil
}

// resolve applies the config file to cmd's host flags and resolves them
// (supervisor.Resolve): the file's and the environment's warnings first.
// Errors are usage errors naming the flag and, for a file's setting, its
// line.
func resolve(cmd *cobra.Command, h *hostFlags) (supervisor.Config, *config.Applied, error) {
	a, err := applyConfig(cmd)
	if err != nil {
		return supervisor.Config{}, nil, err
	}
	cfg, err := resolveApplied(h, a)
	return cfg, a, err
}

// resolveApplied is resolve for flags the config file was applied to
// (a): apply it once, as a repeatable flag's values add up.
func resolveApplied(h *hostFlags, a *config.Applied) (supervisor.Config, error) {
	o := h.options()
	if err := checkHost(o, a); err != nil {
		return supervisor.Config{}, err
	}
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		return cfg, usageError{a.Blame(err)} // a setting that cannot work as given
	}
	cfg.Warnings = append(append([]string(nil), a.Warnings...), cfg.Warnings...)
	return cfg, nil
}

// look is how the dashboard looks and answers keys and the mouse: its key
// map ([keys] over SPEC §7's), its styles ([theme] over the terminal's)
// and whether it takes the mouse (--mouse, or the file's mouse).
type look struct {
	keys   keymap.KeyMap
	styles theme.Styles
	mouse  bool
}

// lookOf returns the dashboard's look for f, on stdout; mouse is the
// --mouse flag's value (the file's mouse when the command line leaves it).
func lookOf(f *config.File, mouse bool) look {
	o := theme.Detect(os.Stdout, os.Environ())
	return look{keys: f.Keys, styles: theme.New(f.Theme.Background.Apply(o)), mouse: mouse}
}

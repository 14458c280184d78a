package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/internal/config"
	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// showConfig runs `subdash config`: the settings the dashboard would run
// with, given cmd's flags, and where each came from; then the file's keys,
// theme and hosts. It starts nothing and returns the exit status.
func showConfig(cmd *cobra.Command, hf *hostFlags, df *dashFlags) int {
	cfg, a, err := resolve(cmd, hf)
	if err != nil {
		return failed(err)
	}
	writeConfig(os.Stdout, cmd.Flags(), cfg, a, df)
	return 0
}

// writeConfig writes showConfig's report on w.
func writeConfig(w io.Writer, fs *pflag.FlagSet, cfg supervisor.Config, a *config.Applied, df *dashFlags) {
	f := a.File
	switch {
	case f.Path == "":
		fmt.Fprintln(w, "config file: none (neither XDG_CONFIG_HOME nor HOME is set)")
	case f.Exists:
		fmt.Fprintf(w, "config file: %s\n", f.Path)
	default:
		fmt.Fprintf(w, "config file: %s (not there: nothing comes from a file)\n", f.Path)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tIN EFFECT\tFROM")
	row := func(name, value, src string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, value, src)
	}
	row("agent command", cfg.Shown(), commandSource(cfg, a))
	host := server.SettingsOf(cfg)
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Name == "help" || fl.Name == "command" { // the agent command's row says it
			return
		}
		row(fl.Name, effective(fl, host, df), sourceOf(fl.Name, a))
	})
	tools, toolsFrom := mcpToolsOf(f)
	row("tools (subdash mcp)", tools, toolsFrom)
	bg := f.Theme.Background
	if bg == "" {
		bg = theme.BackgroundAuto
	}
	themeFrom := "default"
	if f.Theme.Line > 0 {
		themeFrom = fmt.Sprintf("%s line %d", f.Path, f.Theme.Line)
	}
	if _, noColor := os.LookupEnv("NO_COLOR"); noColor {
		themeFrom += "; NO_COLOR is set: no colour"
	}
	row("[theme] background", string(bg), themeFrom)
	_ = tw.Flush()

	fmt.Fprintln(w)
	if len(f.Rebound) == 0 {
		fmt.Fprintln(w, "[keys]: SPEC §7's, none rebound (the dashboard's ? lists them; README's key table)")
	} else {
		fmt.Fprintln(w, "[keys] rebound (every other key is SPEC §7's):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range f.Rebound {
			b := actionBinding(f.Keys, r.Action)
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.Action, b.Help().Key, b.Help().Desc, r.Where)
		}
		_ = tw.Flush()
	}
	if len(f.Hosts) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "[[hosts]] (read and checked; not used yet: the dashboard of several hosts will show them):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, h := range f.Hosts {
			ro := ""
			if h.ReadOnly {
				ro = "read-only"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s line %d\n", h.Name, h.Target, ro, f.Path, h.Line)
		}
		_ = tw.Flush()
	}
	if len(cfg.Warnings)+len(cfg.Notes) > 0 {
		fmt.Fprintln(w)
		for _, s := range cfg.Warnings {
			fmt.Fprintf(w, "warning: %s\n", s)
		}
		for _, s := range cfg.Notes {
			fmt.Fprintf(w, "note: %s\n", s)
		}
	}
}

// mcpToolsOf returns `subdash mcp`'s tool family in effect here and where
// it came from, as mcpTools chooses it without --tools.
func mcpToolsOf(f *config.File) (value, from string) {
	if v := strings.TrimSpace(os.Getenv("SUBDASH_MCP_TOOLS")); v != "" && checkTools(v) == nil {
		return v, "environment SUBDASH_MCP_TOOLS"
	}
	for _, st := range f.Settings {
		if st.Name == "tools" {
			return strings.Join(st.Values, ""), fmt.Sprintf("%s line %d", f.Path, st.Line)
		}
	}
	return "seed", "default"
}

// commandSource says where the agent command came from (SPEC §2): the
// flag, the variable or the file's line that chose it, else the step of
// the resolution that found it.
func commandSource(cfg supervisor.Config, a *config.Applied) string {
	for _, name := range []string{"preset", "command"} {
		if src := a.Source(name); src.Kind != config.Default {
			return fmt.Sprintf("%s (%s)", src, name)
		}
	}
	if cfg.CommandSource == supervisor.SourceEnv {
		return "environment MEMO_SUBAGENT_COMMAND"
	}
	return "default: " + string(cfg.CommandSource)
}

// sourceOf says where flag name's setting came from; the defaults of
// --dir, --state-dir and --socket are said as SPEC §2 and §6 make them.
func sourceOf(name string, a *config.Applied) string {
	src := a.Source(name)
	if src.Kind != config.Default {
		return src.String()
	}
	switch name {
	case "dir":
		return "default: the current directory"
	case "state-dir":
		return "default: $XDG_STATE_HOME/subdash, else ~/.local/state/subdash"
	case "socket":
		return "default: one per working directory (SPEC §6)"
	}
	return "default"
}

// effective returns flag fl's setting in effect: the host's resolved one
// where it has one (hostSettings), else the flag's value, as the flag
// takes it.
func effective(fl *pflag.Flag, host wire.Settings, df *dashFlags) string {
	switch fl.Name {
	case "dir":
		return host.Dir
	case "state-dir":
		return host.StateDir
	case "socket":
		return host.Socket
	case "spawn":
		if len(df.spawns) == 0 {
			return "(none)"
		}
		return strings.Join(df.spawns, " · ")
	case "line-memory":
		if host.LineMemory == 0 {
			return "-1"
		}
		return fmt.Sprint(host.LineMemory >> 20)
	case "max-log-size":
		return proto.FormatSize(host.MaxLogSize)
	case "restore-window":
		return proto.FormatDuration(host.RestoreWindow)
	case "log-retention":
		return proto.FormatDuration(host.LogRetention)
	case "stall-after":
		return proto.FormatDuration(host.StallAfter)
	}
	if get, ok := hostSettings[fl.Name]; ok {
		v := get(host)
		switch x := v.(type) {
		case time.Duration:
			return x.String()
		case []string:
			if len(x) == 0 {
				return "(none)"
			}
			return strings.Join(x, ", ")
		}
		return describeSetting(v)
	}
	return describeSetting(fl.Value.String())
}

// actionBinding returns the binding of k that action names.
func actionBinding(k keymap.KeyMap, action string) key.Binding {
	for _, a := range keymap.Actions() {
		if a.Name == action {
			return *a.Binding(&k)
		}
	}
	return key.Binding{}
}

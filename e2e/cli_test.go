package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// The command line (docs/cli.md) and the config file
// (docs/configuration.md), as a user and a script meet them.

// output runs `subdash args…` with env added and returns its stdout,
// stderr and exit status.
func output(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(testEnv(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// configHome writes text as the config file of a new XDG_CONFIG_HOME and
// returns the variable to run subdash with, and the file's path.
func configHome(t *testing.T, text string) (env, path string) {
	t.Helper()
	home := t.TempDir()
	path = filepath.Join(home, "subdash", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return "XDG_CONFIG_HOME=" + home, path
}

// TestHelpCompletionsAndMan: help per command (also asked for the Go
// way, -help), completions for the three shells, and a man page.
func TestHelpCompletionsAndMan(t *testing.T) {
	for _, c := range []struct {
		args []string
		says []string
	}{
		{[]string{"--help"}, []string{"serve", "attach", "ctl", "mcp", "config", "completion", "--max-agents", "--allow-nested"}},
		{[]string{"-help"}, []string{"serve", "--max-agents"}},
		{[]string{"serve", "-h"}, []string{"subdash serve", "--max-agents", "--grace"}},
		{[]string{"help", "mcp"}, []string{"--tools", "--host"}},
		{[]string{"ctl", "help"}, []string{"usage: subdash ctl"}},
		{[]string{"completion", "bash"}, []string{"__start_subdash", "complete -o default -F __start_subdash subdash"}},
		{[]string{"completion", "zsh"}, []string{"#compdef subdash"}},
		{[]string{"completion", "fish"}, []string{"complete -c subdash"}},
		{[]string{"man"}, []string{".TH SUBDASH 1", "max-agents", "subdash - A terminal dashboard"}},
	} {
		out, errOut, code := output(t, nil, c.args...)
		if code != 0 {
			t.Errorf("subdash %q: exit %d, stderr %q", c.args, code, errOut)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(out, s) {
				t.Errorf("subdash %q does not say %q:\n%s", c.args, s, out)
			}
		}
	}
	// a shell's completion of --preset offers the presets
	out, _, _ := output(t, nil, "__complete", "--preset", "")
	if !strings.Contains(out, "claude\n") || !strings.Contains(out, "builtin\n") {
		t.Errorf("completion of --preset: %q", out)
	}
}

// TestSingleDashFlags: a script's Go-style single-dash long flags work as
// they did: `subdash serve -max-agents 3 -dir D …`.
func TestSingleDashFlags(t *testing.T) {
	w := newWorkspace(t)
	p := start(t, nil, "serve", "-command", e2eCommand, "-max-agents", "3", "-grace=200ms", "-dir", w.dir, "-state-dir", w.state, "-socket", w.socket)
	waitListening(t, p, w.socket)
	var info proto.Info
	ctlOK(t, w, &info, "info")
	if info.MaxAgents != 3 || info.Command != e2eCommand {
		t.Errorf("serve -max-agents 3 -command …: the host has %d agents at most and command %q", info.MaxAgents, info.Command)
	}
}

// TestConfigFileSettings: the file's settings stand under the environment
// and the flags (SPEC §2), and subdash config says where each came from.
func TestConfigFileSettings(t *testing.T) {
	home, path := configHome(t, "# mine\nmax-agents = 2\ngrace = \"300ms\"\ncommand = \""+strings.ReplaceAll(e2eCommand, `"`, `\"`)+"\"\n")
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want int
	}{
		{"file", nil, nil, 2},
		{"environment beats file", []string{"MEMO_SUBAGENT_MAX_AGENTS=3"}, nil, 3},
		{"flag beats both", []string{"MEMO_SUBAGENT_MAX_AGENTS=3"}, []string{"--max-agents", "5"}, 5},
		{"invalid environment: the file", []string{"MEMO_SUBAGENT_MAX_AGENTS=lots"}, nil, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorkspace(t)
			p := serveWith(t, w, append([]string{home}, c.env...), c.args...)
			var info proto.Info
			ctlOK(t, w, &info, "info")
			if info.MaxAgents != c.want || info.Command != e2eCommand {
				t.Errorf("the host runs %d agents at most with %q; want %d with the file's command", info.MaxAgents, info.Command, c.want)
			}
			if c.name == "invalid environment: the file" {
				_ = p.cmd.Process.Signal(os.Interrupt)
				_, stderr := p.wait(t)
				if want := `MEMO_SUBAGENT_MAX_AGENTS="lots" is not a positive number; using max-agents = 2 from ` + path + " line 2"; !strings.Contains(stderr, want) {
					t.Errorf("serve's stderr %q does not say %q", stderr, want)
				}
			}
		})
	}
	out, errOut, code := output(t, []string{home, "MEMO_SUBAGENT_MAX_AGENTS=3"}, "config", "--grace", "1s")
	if code != 0 {
		t.Fatalf("subdash config: exit %d: %s", code, errOut)
	}
	for _, line := range []string{
		"config file: " + path,
		"agent command",
		path + " line 4 (command)",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("subdash config does not say %q:\n%s", line, out)
		}
	}
	for name, from := range map[string]string{"max-agents": "environment MEMO_SUBAGENT_MAX_AGENTS", "grace": "flag", "scrollback": "default"} {
		if !hasRow(out, name, from) {
			t.Errorf("subdash config: %s is not from %s:\n%s", name, from, out)
		}
	}
}

// hasRow reports whether subdash config's table has a row for setting
// name that ends with from.
func hasRow(out, name, from string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name && strings.HasSuffix(strings.TrimSpace(l), from) {
			return true
		}
	}
	return false
}

// TestBadConfigFile: a file with an unknown key, a value of the wrong
// type or two actions on one key stops every command that reads it with
// exit 2 and a line per problem naming the file's line; nothing starts.
func TestBadConfigFile(t *testing.T) {
	home, path := configHome(t, "max-agent = 2\ngrace = 3\n\n[keys]\nspawn = \"s\"\n")
	w := newWorkspace(t)
	for _, args := range [][]string{
		{"config"},
		append([]string{"serve"}, w.flags()...),
		append([]string{"mcp"}, w.flags()...),
	} {
		_, stderr, code := output(t, []string{home}, args...)
		want := []string{
			"subdash: " + path + ` line 1: unknown key "max-agent"`,
			"subdash: " + path + " line 2: grace = 3: wrong type: grace takes a duration in quotes",
			"subdash: " + path + ` line 5: spawn takes key "s", which is send's by default; rebind send too, in [keys]`,
		}
		if code != 2 {
			t.Errorf("subdash %s with a bad config file: exit %d, want 2", args[0], code)
		}
		for _, s := range want {
			if !strings.Contains(stderr, s+"") {
				t.Errorf("subdash %s: stderr %q does not say %q", args[0], stderr, s)
			}
		}
	}
	if fileExists(w.socket) {
		t.Error("a host started despite the bad config file")
	}
	// ctl reads no config file: it works whatever the file says
	if _, stderr, code := output(t, []string{home}, "ctl", "list", "--socket", w.socket); code != 1 || !strings.Contains(stderr, "no subdash is serving") {
		t.Errorf("ctl with a bad config file: exit %d, %q", code, stderr)
	}
}

// TestConfigKeysInTheDashboard: [keys] rebinds the dashboard's keys: the
// hint and the help name the new key, which spawns; the old one does
// nothing.
func TestConfigKeysInTheDashboard(t *testing.T) {
	home, _ := configHome(t, "[keys]\nspawn = \"N\"\n")
	d := startDash(t, 120, 30, []string{home}, "--command", e2eCommand)
	d.waitText("no agents yet: press N to spawn one")
	d.keys("n", "N")
	d.waitText("spawn ›")
	d.typeText("hello")
	d.keys("Enter")
	s := d.waitFor("the answer in the log pane", func(s string) bool { return strings.Contains(strings.Join(d.logRows(s), "\n"), "got: hello") })
	if strings.Count(strings.Join(d.logRows(s), "\n"), "got: hello") > 1 || strings.Contains(s, "got: nhello") {
		t.Errorf("n did something besides nothing:\n%s", s)
	}
}

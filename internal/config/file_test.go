package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/subdash/subdash/theme"
)

// flags is a flag set shaped like subdash's: one flag of each type the
// file's values are checked against.
func flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("command", "", "")
	fs.String("preset", "", "")
	fs.String("preset-args", "", "")
	fs.Int("max-agents", 0, "")
	fs.Duration("grace", 1500*time.Millisecond, "")
	fs.Bool("allow-nested", false, "")
	fs.Float64("max-budget-usd", 0, "")
	fs.StringArray("kube-env", nil, "")
	fs.String("notify", "auto", "")
	fs.String("dir", "", "")
	fs.StringArray("spawn", nil, "")
	return fs
}

var presets = []string{"claude", "codex", "gemini", "memo", "builtin"}

// write writes text as a config file in a temporary folder and returns
// its path.
func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, text string) (*File, error) {
	t.Helper()
	return Load(write(t, text), Schema{Flags: flags(), Presets: presets})
}

// TestLoadReadsEveryPart: a file with every part is read with each key's
// line, as the flags take the values.
func TestLoadReadsEveryPart(t *testing.T) {
	f, err := load(t, `# settings
max-agents = 2
grace = "3s"

preset = "claude"
allow-nested = true
max-budget-usd = 1
kube-env = ["A", "B"]

[presets.claude]
args = "--model sonnet"

[keys]
spawn = "N"
quit = ["q", "ctrl+c", "Q"]

[theme]
background = "light"

[[hosts]]
name = "box"
target = "ssh://box/src/app"

[[hosts]]
name = "here"
target = "/srv/app"
read_only = true
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{
		{"max-agents", []string{"2"}, 2}, {"grace", []string{"3s"}, 3}, {"preset", []string{"claude"}, 5},
		{"allow-nested", []string{"true"}, 6}, {"max-budget-usd", []string{"1"}, 7}, {"kube-env", []string{"A", "B"}, 8},
	}
	if !slices.EqualFunc(f.Settings, want, func(a, b Setting) bool {
		return a.Name == b.Name && a.Line == b.Line && slices.Equal(a.Values, b.Values)
	}) {
		t.Errorf("settings %+v, want %+v", f.Settings, want)
	}
	if p := f.Presets["claude"]; p.Args != "--model sonnet" || p.Line != 11 {
		t.Errorf("[presets.claude] %+v, want its args at line 11", p)
	}
	if k := f.Keys.Spawn; !slices.Equal(k.Keys(), []string{"N"}) || k.Help().Key != "N" {
		t.Errorf("spawn bound to %v shown as %q, want N", k.Keys(), k.Help().Key)
	}
	if k := f.Keys.Quit; k.Help().Key != "q/ctrl+c/Q" {
		t.Errorf("quit shown as %q", k.Help().Key)
	}
	if f.Theme.Background != theme.BackgroundLight || f.Theme.Line != 18 {
		t.Errorf("theme %+v, want light at line 18", f.Theme)
	}
	wantHosts := []Host{{"box", "ssh://box/src/app", false, 20}, {"here", "/srv/app", true, 24}}
	if !slices.Equal(f.Hosts, wantHosts) {
		t.Errorf("hosts %+v, want %+v", f.Hosts, wantHosts)
	}
}

// TestLoadNoFile: no file is no error and sets nothing.
func TestLoadNoFile(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "none.toml"), Schema{Flags: flags(), Presets: presets})
	if err != nil || f.Exists || len(f.Settings) != 0 || f.Keys.Spawn.Help().Key != "n" {
		t.Fatalf("Load of no file: %+v, %v", f, err)
	}
}

// TestLoadRefuses: every problem is an error naming the file's line and
// what is wrong; nothing is silently ignored.
func TestLoadRefuses(t *testing.T) {
	for _, c := range []struct {
		name, text string
		says       []string
	}{
		{"syntax", "max-agents = 2\ngrace = \n", []string{"line 2:"}},
		{"unknown key", "max-agents = 2\nmax-agent = 2\n", []string{`line 2: unknown key "max-agent"`, "did you mean max-agents?"}},
		{"unknown table", "[colours]\nx = 1\n", []string{`line 1: unknown key "colours"`}},
		{"wrong type int", "max-agents = \"2\"\n", []string{`line 1: max-agents = "2": wrong type: max-agents takes a whole number`}},
		{"wrong type duration", "\ngrace = 3\n", []string{`line 2: grace = 3: wrong type: grace takes a duration in quotes`}},
		{"wrong type bool", "allow-nested = \"yes\"\n", []string{`allow-nested = "yes": wrong type: allow-nested takes true or false`}},
		{"wrong type array", "kube-env = \"A\"\n", []string{"kube-env takes an array of strings"}},
		{"bad value", "grace = \"3x\"\n", []string{`line 1: grace = "3x": time: unknown unit "x"`}},
		{"flag only", "dir = \"/tmp\"\n", []string{"line 1: dir is a flag only (--dir)"}},
		{"spawn flag only", "spawn = [\"x\"]\n", []string{"line 1: spawn is a flag only"}},
		{"preset-args", "preset-args = \"x\"\n", []string{"line 1: preset-args: give a preset's arguments in its own table, [presets.NAME]"}},
		{"both command and preset", "command = \"cat\"\npreset = \"codex\"\n", []string{"line 2: preset and command (line 1) are both given"}},
		{"unknown preset", "[presets.claud]\nargs = \"x\"\n", []string{`line 1: [presets.claud]: unknown preset "claud"`}},
		{"preset key", "[presets.codex]\nargz = \"x\"\n", []string{`line 2: [presets.codex]: unknown key "argz"`}},
		{"preset args type", "[presets.codex]\nargs = 1\n", []string{"line 2: [presets.codex] args = 1: wrong type"}},
		{"unknown action", "[keys]\nspwan = \"n\"\n", []string{`line 2: unknown action "spwan" in [keys]`}},
		{"bad key", "[keys]\nspawn = \"shift+n\"\n", []string{`line 2: spawn: "shift+n": a shifted letter is its capital: write "N"`}},
		{"key type", "[keys]\nspawn = 1\n", []string{"line 2: [keys] spawn = 1: wrong type"}},
		{"clash with a default", "[keys]\nspawn = \"s\"\n", []string{`line 2: spawn takes key "s", which is send's by default; rebind send too, in [keys]`}},
		{"clash of two lines", "[keys]\nspawn = \"x\"\n\nsend = [\"x\"]\n", []string{`line 4: send takes key "x", which spawn takes too (`, `line 2); give each key to one action`}},
		{"theme", "[theme]\nbackground = \"dim\"\n", []string{`line 2: [theme] background: unknown background "dim": use auto, dark or light`}},
		{"theme key", "[theme]\ncolour = \"x\"\n", []string{`line 2: [theme]: unknown key "colour"`}},
		{"theme not a table", "theme = \"dark\"\n", []string{"line 1: theme must be a table"}},
		{"host without name", "[[hosts]]\ntarget = \"/srv\"\n", []string{"line 1: [[hosts]]: give the host a name"}},
		{"host target", "[[hosts]]\nname = \"a\"\ntarget = \"srv\"\n", []string{`line 1: [[hosts]] a: target "srv": give an ssh://`}},
		{"host twice", "[[hosts]]\nname = \"a\"\ntarget = \"/a\"\n\n[[hosts]]\nname = \"a\"\ntarget = \"/b\"\n", []string{`line 5: [[hosts]]: name "a" is taken by the [[hosts]] of line 1`}},
		{"host key", "[[hosts]]\nname = \"a\"\ntarget = \"/a\"\nreadonly = true\n", []string{`line 1: [[hosts]]: unknown key "readonly"`}},
		{"host type", "[[hosts]]\nname = \"a\"\ntarget = \"/a\"\nread_only = \"yes\"\n", []string{`read_only = "yes": wrong type: read_only takes true or false`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.text)
			if err == nil {
				t.Fatalf("no error for %q", c.text)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if !strings.Contains(err.Error(), "config.toml line ") {
				t.Errorf("error %q does not name the file and the line", err)
			}
		})
	}
}

// TestLoadJoinsEveryProblem: one error lists every problem of the file.
func TestLoadJoinsEveryProblem(t *testing.T) {
	_, err := load(t, "max-agent = 2\ngrace = 3\n[keys]\nspawn = \"s\"\n")
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"line 1:", "line 2:", "line 4:"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

// TestPath: XDG_CONFIG_HOME when absolute, else ~/.config.
func TestPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/subdash/config.toml"},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/subdash/config.toml"},
		{map[string]string{"HOME": "/h"}, "/h/.config/subdash/config.toml"},
		{map[string]string{}, ""},
	} {
		if got := Path(env(c.vars)); got != c.want {
			t.Errorf("Path(%v) = %q, want %q", c.vars, got, c.want)
		}
	}
}

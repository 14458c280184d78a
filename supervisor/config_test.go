package supervisor

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/runner"
)

// fakeEnv returns an Environment with the given variables and, when memo is
// true, a memo on PATH.
func fakeEnv(vars map[string]string, memo bool) Environment {
	return Environment{
		Getenv: func(k string) string { return vars[k] },
		LookPath: func(name string) (string, error) {
			if name == "memo" && memo {
				return "/usr/bin/memo", nil
			}
			return "", exec.ErrNotFound
		},
		Executable: "/opt/sub dash/subdash",
		UID:        1000,
	}
}

func TestCommandResolutionOrder(t *testing.T) {
	withDist := t.TempDir()
	if err := os.MkdirAll(filepath.Join(withDist, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withDist, "dist", "index.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	state := map[string]string{"HOME": t.TempDir()}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range state {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name    string
		opts    Options
		vars    map[string]string
		memo    bool
		command string
		source  CommandSource
		note    bool
		shown   string // Shown(); "" means command
	}{
		{"flag wins over env", Options{Command: " my-agent ", Dir: withDist}, with(map[string]string{"MEMO_SUBAGENT_COMMAND": "env-agent"}), true, "my-agent", SourceFlag, false, ""},
		{"env, trimmed", Options{Dir: withDist}, with(map[string]string{"MEMO_SUBAGENT_COMMAND": "  env-agent --x  "}), true, "env-agent --x", SourceEnv, false, ""},
		{"blank env is skipped", Options{Dir: withDist}, with(map[string]string{"MEMO_SUBAGENT_COMMAND": "   "}), true, "node " + filepath.Join(withDist, "dist", "index.js") + " --dangerous", SourceDist, false, ""},
		{"memo on PATH", Options{Dir: plain}, with(nil), true, "memo --dangerous", SourceMemo, false, ""},
		{"built-in agent", Options{Dir: plain}, with(nil), false, "'/opt/sub dash/subdash' agent", SourceBuiltin, true, "subdash agent"},
		{"builtin preset", Options{Dir: plain, Preset: "builtin", PresetArgs: "--pace 1s"}, with(nil), false, "'/opt/sub dash/subdash' agent --pace 1s", SourcePreset, false, "subdash agent --pace 1s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Resolve(c.opts, fakeEnv(c.vars, c.memo))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Command != c.command || cfg.CommandSource != c.source {
				t.Fatalf("command = %q (%s), want %q (%s)", cfg.Command, cfg.CommandSource, c.command, c.source)
			}
			if want := cmp.Or(c.shown, c.command); cfg.Shown() != want {
				t.Errorf("shown as %q, want %q (the executable's name, not its path)", cfg.Shown(), want)
			}
			if got := len(cfg.Notes) > 0 && strings.Contains(cfg.Notes[0], "memo not found"); got != c.note {
				t.Fatalf("notes = %q", cfg.Notes)
			}
		})
	}
}

func TestMaxAgentsFromFlagAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	for _, c := range []struct {
		flag    int
		env     string
		want    int
		warning bool
	}{
		{0, "", 4, false},
		{0, "7", 7, false},
		{2, "7", 2, false},
		{0, "zero", 4, true},
		{0, "0", 4, true},
		{0, "-3", 4, true},
	} {
		cfg, err := Resolve(Options{MaxAgents: c.flag, Dir: dir, Command: "x"},
			fakeEnv(map[string]string{"HOME": home, "MEMO_SUBAGENT_MAX_AGENTS": c.env}, false))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MaxAgents != c.want || (len(cfg.Warnings) > 0) != c.warning {
			t.Errorf("flag %d env %q: max %d warnings %q", c.flag, c.env, cfg.MaxAgents, cfg.Warnings)
		}
		if c.warning && !strings.Contains(cfg.Warnings[0], "MEMO_SUBAGENT_MAX_AGENTS") {
			t.Errorf("warning %q does not name the variable", cfg.Warnings[0])
		}
	}
	if _, err := Resolve(Options{MaxAgents: -1, Dir: dir}, fakeEnv(map[string]string{"HOME": home}, false)); err == nil {
		t.Error("negative --max-agents accepted")
	}
}

// TestMaxDepthFromFlagAndEnvironment: --max-depth, else
// MEMO_SUBAGENT_MAX_DEPTH, else Memo's 3; an invalid variable means 3
// with a warning naming it (SPEC §14).
func TestMaxDepthFromFlagAndEnvironment(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		flag    int
		env     string
		want    int
		warning bool
	}{{0, "", 3, false}, {0, "5", 5, false}, {2, "5", 2, false}, {0, "deep", 3, true}, {0, "0", 3, true}} {
		cfg, err := Resolve(Options{MaxDepth: c.flag, Dir: dir, Command: "x"},
			fakeEnv(map[string]string{"HOME": home, "MEMO_SUBAGENT_MAX_DEPTH": c.env}, false))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MaxDepth != c.want || (len(cfg.Warnings) > 0) != c.warning ||
			c.warning && !strings.Contains(cfg.Warnings[0], `MEMO_SUBAGENT_MAX_DEPTH="`+c.env+`" is not a positive number; using 3`) {
			t.Errorf("flag %d env %q: depth %d warnings %q", c.flag, c.env, cfg.MaxDepth, cfg.Warnings)
		}
	}
	if _, err := Resolve(Options{MaxDepth: -1, Dir: dir, Command: "x"}, fakeEnv(map[string]string{"HOME": home}, false)); err == nil {
		t.Error("negative --max-depth accepted")
	}
}

// TestMaxLogSizeDefaultsToOneGiB: --max-log-size unset is 1 GiB, 0 is no
// cap, and a cap too small to hold a head and four tail parts is refused
// saying what to give (SPEC §5).
func TestMaxLogSizeDefaultsToOneGiB(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	env := fakeEnv(map[string]string{"HOME": home}, false)
	size := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		flag *int64
		want int64
	}{{nil, 1 << 30}, {size(0), 0}, {size(10 << 20), 10 << 20}, {size(64 << 10), 64 << 10}} {
		cfg, err := Resolve(Options{Dir: dir, Command: "x", MaxLogSize: c.flag}, env)
		if err != nil || cfg.MaxLogSize != c.want {
			t.Errorf("--max-log-size %v: %d, %v; want %d", c.flag, cfg.MaxLogSize, err, c.want)
		}
	}
	_, err := Resolve(Options{Dir: dir, Command: "x", MaxLogSize: size(1000)}, env)
	if err == nil || err.Error() != "invalid --max-log-size 1000: give 0 (no cap) or at least 64KiB" {
		t.Errorf("--max-log-size 1000: %v", err)
	}
}

// TestNestedRefusedWithKubernetes: a submission in a pod cannot reach the
// host's control socket, so --allow-nested with the Kubernetes runner is
// refused at start, saying why (SPEC §14).
func TestNestedRefusedWithKubernetes(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	_, err := Resolve(Options{Dir: dir, Command: "x", AllowNested: true, Runner: "kubernetes", Kube: runner.KubeOptions{Image: "img"}},
		fakeEnv(map[string]string{"HOME": home}, false))
	if err == nil || !strings.Contains(err.Error(), "--allow-nested does not work with --runner kubernetes: a submission in a pod cannot reach this host's control socket") {
		t.Fatalf("--allow-nested with kubernetes: %v", err)
	}
}

func TestResolveErrorsAndDefaults(t *testing.T) {
	home := t.TempDir()
	env := fakeEnv(map[string]string{"HOME": home}, false)
	if _, err := Resolve(Options{Dir: filepath.Join(home, "missing")}, env); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := Resolve(Options{Dir: home, Command: "x", Preset: "claude"}, env); err == nil || !strings.Contains(err.Error(), "--preset and --command") {
		t.Errorf("preset and command: %v", err)
	}
	if _, err := Resolve(Options{Dir: home, Preset: "nope"}, env); err == nil || !strings.Contains(err.Error(), "unknown preset") {
		t.Errorf("unknown preset: %v", err)
	}
	cfg, err := Resolve(Options{Dir: home}, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StateDir != filepath.Join(home, ".local", "state", "subdash") || cfg.Grace != DefaultGrace || cfg.Scrollback != DefaultScrollback || !cfg.CollabTools {
		t.Errorf("defaults: %+v", cfg)
	}
	if !strings.HasPrefix(cfg.Socket, "/tmp/subdash-1000"+"/") || !strings.HasSuffix(cfg.Socket, ".sock") {
		t.Errorf("socket %s", cfg.Socket)
	}
	cfg, _ = Resolve(Options{Dir: home}, fakeEnv(map[string]string{"HOME": home, "XDG_STATE_HOME": "/xs", "XDG_RUNTIME_DIR": "/run/user/1000",
		"MEMO_ENABLE_COLLAB_TOOLS": "0"}, false))
	if cfg.StateDir != "/xs/subdash" || filepath.Dir(cfg.Socket) != "/run/user/1000/subdash" || cfg.CollabTools {
		t.Errorf("XDG: %s %s collab %v", cfg.StateDir, cfg.Socket, cfg.CollabTools)
	}
	if len(filepath.Base(cfg.Socket)) != len("0123456789ab.sock") {
		t.Errorf("socket name %s", filepath.Base(cfg.Socket))
	}
}

func TestDirThroughASymlinkIsTheSameDir(t *testing.T) {
	target := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	env := fakeEnv(map[string]string{"HOME": target}, false)
	a, err1 := Resolve(Options{Dir: target, Command: "x"}, env)
	b, err2 := Resolve(Options{Dir: link, Command: "x"}, env)
	if err1 != nil || err2 != nil || a.Dir != b.Dir || a.Socket != b.Socket {
		t.Fatalf("%s (%s) vs %s (%s): %v %v", a.Dir, a.Socket, b.Dir, b.Socket, err1, err2)
	}
}

// TestPresetCLINotInstalled: a preset whose CLI is not on PATH warns at
// start, naming it and what to do, instead of leaving every agent to fail
// with exit 127; an installed one (memo here) and builtin do not.
func TestPresetCLINotInstalled(t *testing.T) {
	home := t.TempDir()
	env := fakeEnv(map[string]string{"HOME": home}, true)
	cfg, err := Resolve(Options{Dir: home, Preset: "claude"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--preset claude: claude is not on PATH, so every agent will fail (exit 127); install it, or pick another --preset or --command"; !slices.Contains(cfg.Warnings, want) {
		t.Errorf("warnings %q, want %q", cfg.Warnings, want)
	}
	writeMemoConfig(t, filepath.Join(home, ".memo"))
	for _, p := range []string{"memo", "builtin"} {
		if cfg, err := Resolve(Options{Dir: home, Preset: p}, env); err != nil || len(cfg.Warnings) != 0 {
			t.Errorf("--preset %s: %v %q", p, err, cfg.Warnings)
		}
	}
}

// writeMemoConfig writes a Memo config.toml with one provider into the
// Memo home dir.
func writeMemoConfig(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "current_provider = \"stub\"\n[[providers.stub]]\nname = \"stub\"\nenv_api_key = \"STUB_API_KEY\"\nmodel = \"memo-stub\"\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMemoConfigWarning: --preset memo without a Memo config that names a
// provider (in $MEMO_HOME, else ~/.memo) warns at start, saying where it
// looked and what to do, since every agent would be refused (SPEC §8).
func TestMemoConfigWarning(t *testing.T) {
	home := t.TempDir()
	env := fakeEnv(map[string]string{"HOME": home}, true)
	cfg, err := Resolve(Options{Dir: home, Preset: "memo"}, env)
	want := "--preset memo: memo has no provider config (" + filepath.Join(home, ".memo", "config.toml") + ": no such file or directory); run memo once in a terminal"
	if err != nil || len(cfg.Warnings) != 1 || !strings.HasPrefix(cfg.Warnings[0], want) {
		t.Errorf("no config: %v %q, want a warning starting %q", err, cfg.Warnings, want)
	}
	other := filepath.Join(home, "elsewhere")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "config.toml"), []byte("current_provider = \"x\"\n# [[providers.x]]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env = fakeEnv(map[string]string{"HOME": home, "MEMO_HOME": other}, true)
	cfg, _ = Resolve(Options{Dir: home, Preset: "memo"}, env)
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "declares no provider") {
		t.Errorf("config without a provider: warnings %q", cfg.Warnings)
	}
	writeMemoConfig(t, other)
	if cfg, _ = Resolve(Options{Dir: home, Preset: "memo"}, env); len(cfg.Warnings) != 0 {
		t.Errorf("MEMO_HOME with a config: warnings %q", cfg.Warnings)
	}
}

// TestInvalidPresetEnvironmentIsAWarning: an unknown SUBDASH_PRESET is a
// warning and the next step of SPEC §2 applies, as an invalid
// MEMO_SUBAGENT_MAX_AGENTS is; a --preset flag that names none is still an
// error.
func TestInvalidPresetEnvironmentIsAWarning(t *testing.T) {
	dir := t.TempDir()
	env := fakeEnv(map[string]string{"HOME": t.TempDir(), "SUBDASH_PRESET": "claud", "MEMO_SUBAGENT_COMMAND": "cat"}, false)
	c, err := Resolve(Options{Dir: dir}, env)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if c.Command != "cat" || c.CommandSource != SourceEnv {
		t.Errorf("command %q from %s, want cat from MEMO_SUBAGENT_COMMAND", c.Command, c.CommandSource)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, `SUBDASH_PRESET="claud" is not a preset`) }) {
		t.Errorf("warnings %q do not name SUBDASH_PRESET", c.Warnings)
	}
	if _, err := Resolve(Options{Dir: dir, Preset: "claud"}, env); err == nil {
		t.Error("--preset claud resolved; want an error")
	}
}

package kube

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/runner"
)

// resolveInPods resolves o with the Kubernetes runner (registered by
// e2e_test.go's init), on a machine whose PATH has only want.
func resolveInPods(t *testing.T, o supervisor.Options, want ...string) supervisor.Config {
	t.Helper()
	o.Dir, o.StateDir, o.Runner = t.TempDir(), t.TempDir(), runner.Kubernetes
	o.Kube.Image = "localhost/subdash:local"
	env := supervisor.Environment{
		Getenv: func(string) string { return "" },
		LookPath: func(name string) (string, error) {
			for _, w := range want {
				if w == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		},
		Executable: "/home/me/go/bin/subdash",
	}
	c, err := supervisor.Resolve(o, env)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The built-in agent in a pod is `subdash agent` from the image's PATH,
// not this host's binary by its path on this machine (which the pod does
// not have: every agent would end with sh's "not found", exit 127), and
// the host says so at start (SPEC §13).
func TestBuiltinAgentInPodsIsTheImagesSubdash(t *testing.T) {
	for _, o := range []supervisor.Options{{}, {Preset: "builtin", PresetArgs: "--pace 1s"}} {
		c := resolveInPods(t, o)
		want := "subdash agent"
		if o.Preset != "" {
			want += " --pace 1s"
		}
		got := c.Command
		if c.Preset != nil {
			got, _ = c.Preset.CommandFor("a1", "")
		}
		if got != want || c.Executable != "subdash" {
			t.Errorf("preset %q: command %q (executable %q), want %q", o.Preset, got, c.Executable, want)
		}
		if !strings.Contains(strings.Join(c.Notes, "\n"), "the built-in agent runs as `subdash agent` from the PATH of --kube-image") {
			t.Errorf("preset %q: notes %q", o.Preset, c.Notes)
		}
	}
}

// A preset's CLI is looked for on the image's PATH, not this machine's:
// no warning that every agent will fail because claude is not installed
// on the host.
func TestPresetInPodsIsNotLookedForOnTheHost(t *testing.T) {
	c := resolveInPods(t, supervisor.Options{Preset: "claude"})
	if len(c.Warnings) > 0 {
		t.Fatalf("warnings %q", c.Warnings)
	}
	c = resolveInPods(t, supervisor.Options{Command: "my-agent --fast"})
	if len(c.Notes) > 0 || c.Command != "my-agent --fast" {
		t.Fatalf("a plain command: %q, notes %q", c.Command, c.Notes)
	}
}

// Steps 2 and 3 of the command's resolution (SPEC §2: dist/index.js in
// --dir, memo on PATH) look at this machine, not at the image: in pods the
// agent is the built-in one, and no note says memo was not found.
func TestMemoOnThisMachineIsNotThePodsAgent(t *testing.T) {
	c := resolveInPods(t, supervisor.Options{}, "memo", "node")
	if c.Command != "subdash agent" || c.CommandSource != supervisor.SourceBuiltin {
		t.Fatalf("command %q from %s", c.Command, c.CommandSource)
	}
	if notes := strings.Join(c.Notes, "\n"); strings.Contains(notes, "memo not found") {
		t.Fatalf("notes %q", c.Notes)
	}
	if c := resolveInPods(t, supervisor.Options{Preset: "memo"}, "memo"); c.Preset == nil || c.Preset.Name != "memo" {
		t.Fatalf("--preset memo: %+v", c.Preset)
	}
}

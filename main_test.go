package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binPath is the subdash binary built once for the end-to-end tests of this
// package, which run it as a user would: in tmux, as `subdash serve`,
// `subdash ctl` and `subdash mcp`.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "subdash-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "subdash")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building subdash:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireTool skips the test when name is not installed, unless
// SUBDASH_REQUIRE_TOOLS=1 (set by .ci/run, which installs them), where a
// missing tool fails the test instead of hiding it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("SUBDASH_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is required (SUBDASH_REQUIRE_TOOLS=1) but not installed", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

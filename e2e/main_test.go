package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
)

// binPath is the subdash binary built once for the end-to-end tests of this
// package, which run it as a user would: in tmux, as `subdash serve`,
// `subdash ctl` and `subdash mcp`.
var binPath string

// repoRoot is the repository's root (the folder of go.mod, this package's
// parent): the binary is built from there, and testdata/ is there.
var repoRoot string

func TestMain(m *testing.M) {
	if args, ok := helperArgs(); ok {
		os.Exit(runHelper(args))
	}
	os.Exit(run(m))
}

// run builds the binary into a temporary folder, runs the tests and
// removes the folder; it returns the exit status.
func run(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: the repository root (the parent of e2e/, holding go.mod) is not found:", err)
		return 1
	}
	repoRoot = root
	cleanup, err := testkit.EmptyConfigHome()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer cleanup()
	dir, err := os.MkdirTemp("", "subdash-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir) //nolint:errcheck // cleanup of the built binary's temp folder
	binPath = filepath.Join(dir, "subdash")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building subdash:", err)
		return 1
	}
	return m.Run()
}

// requireTool skips the test when name is not installed, unless
// SUBDASH_REQUIRE_TOOLS=1 (set by .ci/run, which installs them), where a
// missing tool fails the test instead of hiding it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testkit.Missing(t, name+" is not installed (apt-get install "+name+")")
	}
	return p
}

// testEnv is this process's environment without the variables that would
// change what the tests expect.
func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SUBDASH_SOCKET", "MEMO_ENABLE_COLLAB_TOOLS", "MEMO_SUBAGENT_MAX_AGENTS", "MEMO_SUBAGENT_COMMAND", "SUBDASH_PRESET",
			"SUBDASH_MCP_TOOLS", "SUBDASH_MCP_SESSION":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// raceBuild is whether this test binary was built with -race
// (race_test.go sets it).
var raceBuild bool

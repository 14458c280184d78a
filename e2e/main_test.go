package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
)

// binPath is the subdash binary built once for the end-to-end tests of this
// package, which run it as a user would: in tmux, as `subdash serve`,
// `subdash ctl` and `subdash mcp`. It is built with -race when this test
// binary is (raceBuild), so that the real hosts and viewers are
// race-checked too; a race one of them finds fails the run (raceLogs).
// Benchmarks run a plain build instead (subdashFor).
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
	if err := buildSubdash(binPath, raceBuild); err != nil {
		fmt.Fprintln(os.Stderr, "building subdash:", err)
		return 1
	}
	if !raceBuild {
		return m.Run()
	}
	// Every race-built subdash the tests start writes what its race
	// detector finds to a file of its own here, not only to a stderr that
	// a test may not read (GORACE, inherited through testEnv).
	races := filepath.Join(dir, "race")
	if err := os.Setenv("GORACE", "log_path="+races); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	if raceLogs(races) && code == 0 {
		code = 1
	}
	return code
}

// buildSubdash builds the subdash binary of this tree into path, with the
// race detector when race is set.
func buildSubdash(path string, race bool) error {
	args := []string{"build", "-o", path}
	if race {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	return build.Run()
}

// raceLogs prints the reports the race detector of a subdash started by
// the tests wrote to the files log_path.<pid> (GORACE's log_path), and
// reports whether there was one.
func raceLogs(logPath string) bool {
	logs, _ := filepath.Glob(logPath + ".*")
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			b = []byte(err.Error())
		}
		fmt.Fprintf(os.Stderr, "e2e: the race detector of a subdash the tests ran (pid %s) found:\n%s\n", strings.TrimPrefix(filepath.Ext(l), "."), b)
	}
	return len(logs) > 0
}

// plainBin is a subdash built without the race detector, for benchmarks
// under -race (benchBinary); built at the first benchmark that asks.
var plainBin struct {
	once sync.Once
	path string
	err  error
}

// benchBinary returns a subdash binary without the race detector, which
// slows what benchmarks measure 2-10 times: binPath, or under -race a
// plain build of this tree made once.
func benchBinary(t testing.TB) string {
	t.Helper()
	if !raceBuild {
		return binPath
	}
	plainBin.once.Do(func() {
		plainBin.path = filepath.Join(filepath.Dir(binPath), "subdash-plain")
		plainBin.err = buildSubdash(plainBin.path, false)
	})
	if plainBin.err != nil {
		t.Fatalf("building subdash without -race for a benchmark: %v", plainBin.err)
	}
	return plainBin.path
}

// subdashFor returns the subdash binary test t runs: benchBinary for a
// benchmark (a *testing.B, or a test named TestBench…), binPath for any
// other test.
func subdashFor(t testing.TB) string {
	t.Helper()
	if _, ok := t.(*testing.B); ok || strings.HasPrefix(t.Name(), "TestBench") {
		return benchBinary(t)
	}
	return binPath
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

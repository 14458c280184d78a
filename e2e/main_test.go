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
// `subdash ctl` and `subdash mcp`. It is a plain build, also under -race:
// a race-built subdash takes about a second to start and 2-10 times the
// CPU, too slow for every test of the package on a loaded machine. The
// tests of the seam between the engine and the ui run raceBinPath for
// their hosts and viewers (raceChecked).
var binPath string

// raceBinPath is the subdash binary built with -race when this test binary
// is (raceBuild), for the tests marked raceChecked; binPath otherwise.
// Every race-built subdash writes what its race detector finds to a file
// of its own, which fails the run (raceLogs).
var raceBinPath string

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
	binPath, raceBinPath = filepath.Join(dir, "subdash"), filepath.Join(dir, "subdash")
	if err := buildSubdash(binPath, false); err != nil {
		fmt.Fprintln(os.Stderr, "building subdash:", err)
		return 1
	}
	if !raceBuild {
		return m.Run()
	}
	raceBinPath = filepath.Join(dir, "subdash-race")
	if err := buildSubdash(raceBinPath, true); err != nil {
		fmt.Fprintln(os.Stderr, "building subdash with -race:", err)
		return 1
	}
	// A race-built subdash writes what its race detector finds to a file
	// of its own here, not only to a stderr that a test may not read
	// (GORACE, inherited through testEnv).
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
// reports whether one of them is not a knownRace.
func raceLogs(logPath string) bool {
	logs, _ := filepath.Glob(logPath + ".*")
	found := false
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			b = []byte(err.Error())
		}
		pid := strings.TrimPrefix(filepath.Ext(l), ".")
		for _, report := range strings.SplitAfter(string(b), "==================\n==================") {
			if why := knownRace(report); why != "" {
				fmt.Fprintf(os.Stderr, "e2e: a subdash the tests ran (pid %s) met a known race of a library, not failing the run: %s\n", pid, why)
				continue
			}
			found = true
			fmt.Fprintf(os.Stderr, "e2e: the race detector of a subdash the tests ran (pid %s) found:\n%s\n", pid, report)
		}
	}
	return found
}

// knownRace says why report is a race of a library subdash cannot fix
// itself, "" for any other: github.com/muesli/cancelreader v0.2.2 (under
// Bubble Tea v2's terminal reader) reads its file's descriptor in Read
// while Close, at the program's shutdown, closes the file.
func knownRace(report string) string {
	if strings.Contains(report, "cancelreader.(*epollCancelReader).Close()") &&
		strings.Contains(report, "cancelreader.(*epollCancelReader).wait()") && !strings.Contains(report, "subdash/subdash/supervisor") {
		return "muesli/cancelreader's Close against its own pending Read (the terminal reader, at a program's shutdown)"
	}
	return ""
}

// seamTests are the top-level tests marked raceChecked.
var seamTests sync.Map

// raceChecked marks test t, with its subtests, as a test of the seam
// between the engine and the ui (a host and its viewers, the host
// dashboard): under -race the hosts and viewers it starts through the
// harness (subdashFor) are race-built, so that a race in those processes
// fails the run. `subdash ctl` stays a plain build: a race-built one
// takes about a second to start. Call it first in the test.
func raceChecked(t *testing.T) {
	seamTests.Store(topTest(t), true)
}

// topTest is the name of t's top-level test.
func topTest(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}

// subdashFor returns the subdash binary test t runs: raceBinPath for a
// test marked raceChecked, binPath for any other.
func subdashFor(t testing.TB) string {
	if _, ok := seamTests.Load(topTest(t)); ok {
		return raceBinPath
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

package wire

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
)

// The engine's packages, each with the packages below it: its internal/
// packages, the runners, the host, the built-in agent and the control
// socket's server; and the supervisor root itself (not the packages below
// it, which hold the leaves front-ends share).
var enginePackages = []string{
	"supervisor/internal", "supervisor/runner", "supervisor/host", "supervisor/builtin", "supervisor/control/server",
}

// isEngine reports whether the package at path (in this module, its
// module path cut off) is the engine's.
func isEngine(path string) bool {
	if path == "supervisor" {
		return true
	}
	for _, e := range enginePackages {
		if path == e || strings.HasPrefix(path, e+"/") {
			return true
		}
	}
	return false
}

// TestFrontEndsImportNoEngine: the front-ends of the control socket (the
// ui, the client, ctl) and the protocol (wire) import no engine package,
// directly or through another: they speak to a host through proto's roles
// and the socket, and share only leaves (proto, termtext, transcript,
// socket, sshlink). A failure names the chain of imports.
func TestFrontEndsImportNoEngine(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		testkit.Missing(t, "no go command on PATH to list the imports with: put Go's bin on PATH")
	}
	const module = "github.com/subdash/subdash/"
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}",
		module+"ui/...", module+"supervisor/control/client", module+"supervisor/control/ctl", module+"supervisor/control/wire").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	var roots []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(l, ":")
		imports[pkg] = strings.Fields(deps)
		if p, ok := strings.CutPrefix(pkg, module); ok && (strings.HasPrefix(p, "ui") || strings.HasPrefix(p, "supervisor/control/")) && !isEngine(p) {
			roots = append(roots, pkg)
		}
	}
	for _, root := range roots {
		// the shortest chain from root to an engine package, if any
		from := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			pkg := queue[0]
			queue = queue[1:]
			if p, ok := strings.CutPrefix(pkg, module); ok && isEngine(p) {
				chain := []string{pkg}
				for at := from[pkg]; at != ""; at = from[at] {
					chain = append([]string{at}, chain...)
				}
				t.Errorf("%s imports the engine: %s", root, strings.Join(chain, " -> "))
				break
			}
			for _, d := range imports[pkg] {
				if _, seen := from[d]; !seen {
					from[d] = pkg
					queue = append(queue, d)
				}
			}
		}
	}
	if len(roots) < 4 {
		t.Fatalf("go list named only %q", roots)
	}
}

package supervisor

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineImportsNoBuiltinAgent: the engine speaks the built-in agent's
// stdin protocol through transcript (ParseBuiltinTaken, IsBuiltinEnd), as
// it speaks claude's; the demo agent itself (supervisor/builtin) is
// main's, and neither the engine nor a package it imports links it.
func TestEngineImportsNoBuiltinAgent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if dep == "github.com/subdash/subdash/supervisor/builtin" {
			t.Errorf("the engine imports %s (go list -deps .); speak its protocol through transcript instead", dep)
		}
	}
}

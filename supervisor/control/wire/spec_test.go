package wire

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	routesBegin = "<!-- routes:begin (generated from supervisor/control/wire's Routes; checked by its spec_test.go, refresh with go test ./supervisor/control/wire -update) -->\n"
	routesEnd   = "<!-- routes:end -->"
)

// specTable renders Routes as SPEC §6's markdown table.
func specTable() string {
	var b strings.Builder
	b.WriteString("| route | takes | answers |\n|---|---|---|\n")
	for _, rt := range Routes {
		b.WriteString("| `" + rt.Pattern() + "` | " + rt.Takes + " | " + rt.Answers + " |\n")
	}
	return b.String()
}

// TestSPECRouteTable keeps SPEC §6's route table equal to Routes, so the
// contract cannot drift from the routes the server registers.
func TestSPECRouteTable(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", "SPEC.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := string(raw)
	i := strings.Index(spec, routesBegin)
	j := strings.Index(spec, routesEnd)
	if i < 0 || j < i {
		t.Fatalf("SPEC.md lacks the route table markers %q … %q", strings.TrimSpace(routesBegin), routesEnd)
	}
	got := spec[i+len(routesBegin) : j]
	want := specTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(spec[:i+len(routesBegin)]+want+spec[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("SPEC.md's route table differs from wire.Routes; run go test ./supervisor/control/wire -update\n got:\n%s\nwant:\n%s", got, want)
}

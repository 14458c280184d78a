package keymap

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the key table in ../README.md")

const (
	keysBegin = "<!-- keys:begin (generated from keymap/; checked by keymap/readme_test.go, refresh with go test ./keymap -update) -->\n"
	keysEnd   = "<!-- keys:end -->"
)

// readmeTable renders the dashboard's bindings as the README's markdown
// table, group by group, in the order of the help overlay.
func readmeTable(k KeyMap) string {
	var b strings.Builder
	b.WriteString("| keys | action | `[keys]` name |\n|---|---|---|\n")
	for _, g := range k.Groups() {
		b.WriteString("| **" + g.Title + "** | | |\n")
		for _, kb := range g.Bindings {
			h := kb.Help()
			b.WriteString("| `" + h.Key + "` | " + h.Desc + " | `" + ActionOf(k, h) + "` |\n")
		}
	}
	return b.String()
}

// TestREADMEKeyTable keeps the key table of README.md equal to the key map,
// so the documentation cannot drift from the bindings.
func TestREADMEKeyTable(t *testing.T) {
	const path = "../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i := strings.Index(readme, keysBegin)
	j := strings.Index(readme, keysEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the key table markers %q … %q", strings.TrimSpace(keysBegin), keysEnd)
	}
	got := readme[i+len(keysBegin) : j]
	want := readmeTable(DefaultKeyMap())
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i+len(keysBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("README.md's key table differs from keymap; run go test ./keymap -update\n got:\n%s\nwant:\n%s", got, want)
}

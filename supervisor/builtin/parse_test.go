package builtin

import (
	"slices"
	"strings"
	"testing"
)

func TestMarkerIndex(t *testing.T) {
	tests := []struct {
		line, marker string
		want         int
	}{
		{"TODO", "TODO", 0},
		{"// TODO: wire it", "TODO", 3},
		{"// FIXME(ana): off by one", "FIXME", 3},
		{"x := 1 // XXX", "XXX", 10},
		{"/* HACK */", "HACK", 3},
		{"a TODO-list", "TODO", 2},
		{"(TODO)", "TODO", 1},
		{"see TODO.", "TODO", 4},
		{`return "TODO"`, "TODO", 8},
		{"é TODO é", "TODO", 3},
		{"TODOS", "TODO", -1},
		{"myTODO", "TODO", -1},
		{"TODO_list", "TODO", -1},
		{"TODO2", "TODO", -1},
		{"2TODO", "TODO", -1},
		{"éTODO", "TODO", -1},
		{"XXXX", "XXX", -1},
		{"0xXXX", "XXX", -1},
		{"hackathon", "HACK", -1},
		{"HACKATHON", "HACK", -1},
		{"a todo in lower case", "TODO", -1},
		{"Hack it", "HACK", -1},
		{"TODOS then TODO", "TODO", 11},
		{"\xffTODO\xff", "TODO", 1},
	}
	for _, tt := range tests {
		if got := markerIndex(tt.line, tt.marker); got != tt.want {
			t.Errorf("markerIndex(%q, %q) = %d, want %d", tt.line, tt.marker, got, tt.want)
		}
	}
}

func TestParseTask(t *testing.T) {
	all := markers
	tests := []struct {
		msg     string
		kind    taskKind
		markers []string
		path    string
	}{
		{"find TODO/FIXME/XXX/HACK in supervisor", taskFind, all, "supervisor"},
		{"find TODO in supervisor", taskFind, []string{"TODO"}, "supervisor"},
		{"find FIXME in .", taskFind, []string{"FIXME"}, "."},
		{"find TODO and FIXME in ui", taskFind, []string{"TODO", "FIXME"}, "ui"},
		{"Find fixme, todo in ui\n", taskFind, []string{"TODO", "FIXME"}, "ui"},
		{"find TODOs", taskFind, []string{"TODO"}, "."},
		{"search for HACKs under /tmp/x", taskFind, []string{"HACK"}, "/tmp/x"},
		{"list all TODO comments in 'my dir'", taskFind, []string{"TODO"}, "my dir"},
		{"find all markers in ui", taskFind, all, "ui"},
		{"grep XXX in a path in b", taskFind, []string{"XXX"}, "a path in b"},
		{"audit supervisor", taskFind, all, "supervisor"},
		{"  AUDIT  ", taskFind, all, "."},
		{"audit `ui/`", taskFind, all, "ui/"},
		{"summarize supervisor", taskSummarize, nil, "supervisor"},
		{"summarise", taskSummarize, nil, "."},
		{"summary of ui", taskSummarize, nil, "ui"},
		{"stats for .", taskSummarize, nil, "."},
		{"split supervisor", taskSplit, nil, "supervisor"},
		{"Split", taskSplit, nil, "."},
		{"fan out over ui", taskSplit, nil, "ui"},
		{"fan out  'my dir'", taskSplit, nil, "my dir"},
		{"delegate .", taskSplit, nil, "."},
	}
	for _, tt := range tests {
		got, err := parseTask(tt.msg)
		if err != nil {
			t.Errorf("parseTask(%q): %v", tt.msg, err)
			continue
		}
		if got.kind != tt.kind || !slices.Equal(got.markers, tt.markers) || got.path != tt.path {
			t.Errorf("parseTask(%q) = %+v, want kind %d, markers %q, path %q", tt.msg, got, tt.kind, tt.markers, tt.path)
		}
	}
}

func TestParseTaskRejects(t *testing.T) {
	for _, msg := range []string{
		"", " \n ", "make coffee", "find bugs in ui", "find in ui", "find",
		"auditing ui", "summarized ui", "please audit ui", "splits ui", "fan ui",
	} {
		if got, err := parseTask(msg); err == nil {
			t.Errorf("parseTask(%q) = %+v, want an error", msg, got)
		}
	}
}

func TestLineText(t *testing.T) {
	long := strings.Repeat("a ", 100) + "TODO: here " + strings.Repeat("b ", 100)
	got := lineText(long, strings.Index(long, "TODO"))
	if n := len([]rune(got)); n != maxTextLen+2 {
		t.Errorf("cut line has %d characters, want %d: %q", n, maxTextLen+2, got)
	}
	if !strings.HasPrefix(got, "…a a") || !strings.Contains(got, "TODO: here") || !strings.HasSuffix(got, "b…") {
		t.Errorf("cut line = %q, want it to keep the marker with … at both ends", got)
	}
	if got := lineText("\t  // TODO: short\t", 5); got != "// TODO: short" {
		t.Errorf("short line = %q", got)
	}
	if got := lineText("TODO \x1b[31mred\x1b[0m\tand\x00\xff", 0); got != "TODO \uFFFD[31mred\uFFFD[0m and\uFFFD\uFFFD" {
		t.Errorf("sanitized line = %q", got)
	}
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\r\nb\n", []string{"a", "b"}},
		{"a\n\nb", []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		if got := splitLines([]byte(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB",
		4 << 20: "4 MiB", 5<<30 + 1<<29: "5.5 GiB",
	}
	for n, want := range tests {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLanguage(t *testing.T) {
	tests := map[string]string{
		"a/main.go": "Go", "README.MD": "Markdown", "x/run.sh": "Shell", "go.mod": "Go module",
		"Makefile": "Makefile", "app.tsx": "TypeScript", "lib.mjs": "JavaScript", "c.yml": "YAML",
		"LICENSE": "other", ".gitignore": "other", "data.bin": "other",
	}
	for name, want := range tests {
		if got := language(name); got != want {
			t.Errorf("language(%q) = %q, want %q", name, got, want)
		}
	}
}

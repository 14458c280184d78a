package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/supervisor/control/server"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command tree")

// cliDoc renders docs/cli.md from the command tree: every command, its
// help and its flags, so the reference cannot drift from the binary.
func cliDoc(root *cobra.Command) string {
	root.InitDefaultCompletionCmd()
	var b strings.Builder
	b.WriteString("# subdash command line\n\n")
	b.WriteString("<!-- generated from the command tree (main_cli.go) by main_doc_test.go; refresh with go test . -run TestCLIDoc -update -->\n\n")
	b.WriteString("Every command and flag of `subdash`, as `subdash <command> --help` shows them. Flags are GNU's (`--max-agents 2`, `--max-agents=2`); ")
	b.WriteString("a long flag written with one dash (`-max-agents 2`, `-version`, `-help`) is taken too. ")
	b.WriteString("Most host settings can also come from the environment and the config file: flags, then the environment, then the file, then the defaults ")
	b.WriteString("([configuration.md](configuration.md); `subdash config` shows where each came from).\n\n")
	b.WriteString("Exit status, every command: 0 success; 1 a failure at run time; 2 a usage error (an unknown flag, a bad value, a bad config file); 128+n ended by signal n.\n\n")
	b.WriteString("Shell completions come from `subdash completion bash|zsh|fish|powershell`, a man page from `subdash man` (`subdash man | man -l -`).\n")
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" {
			return
		}
		writeCommand(&b, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}

// valueNames are how the reference names a flag's value, by its type.
var valueNames = map[string]string{
	"string": "TEXT", "stringArray": "TEXT", "int": "N", "float64": "X", "duration": "D", "size": "SIZE",
}

func writeCommand(b *strings.Builder, c *cobra.Command) {
	level := strings.Repeat("#", min(2+strings.Count(c.CommandPath(), " "), 4))
	fmt.Fprintf(b, "\n%s %s\n\n", level, c.CommandPath())
	text := c.Long
	if text == "" || c.HasParent() && c.Parent().Name() == "completion" { // cobra's, written for its own docs
		text = c.Short
	}
	if c.Hidden {
		text += " (Not listed by `subdash --help`.)"
	}
	fmt.Fprintf(b, "%s\n\n", strings.TrimSpace(text))
	fmt.Fprintf(b, "```\n%s\n```\n", c.UseLine())
	if c.Example != "" {
		fmt.Fprintf(b, "\nExamples:\n\n```sh\n%s\n```\n", strings.TrimSpace(c.Example))
	}
	if c.Name() == "bridge" {
		fmt.Fprintf(b, "\n```text\n%s```\n", server.BridgeUsage)
		return
	}
	if c.DisableFlagParsing {
		return
	}
	var rows []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name
		if v, ok := valueNames[f.Value.Type()]; ok {
			name += " " + v
		} else if t := f.Value.Type(); t != "bool" {
			name += " " + t // its own word for it (wordValue)
		}
		name += "`"
		def := f.DefValue
		switch def {
		case "", "[]", "0", "false":
			def = ""
		default:
			def = "`" + def + "`"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", name, def, strings.ReplaceAll(f.Usage, "|", `\|`)))
	})
	if len(rows) > 0 {
		b.WriteString("\n| flag | default | what it does |\n|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
}

// TestCLIDoc keeps docs/cli.md equal to the command tree, as
// keymap/readme_test.go keeps README's key table.
func TestCLIDoc(t *testing.T) {
	const path = "docs/cli.md"
	root, _ := newRoot()
	want := cliDoc(root)
	got, err := os.ReadFile(path)
	if string(got) == want {
		return
	}
	if *update {
		if err := os.MkdirAll("docs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v; run go test . -run TestCLIDoc -update", err)
	}
	t.Fatalf("docs/cli.md differs from the command tree; run go test . -run TestCLIDoc -update\n%s", firstDiff(string(got), want))
}

// firstDiff says where two texts first differ, by line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return ""
}

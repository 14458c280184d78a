package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/control/ctl"
	"github.com/subdash/subdash/supervisor/proto"
)

// runCLI runs the command line args as subdash does, its commands reading
// stdin and writing on buffers, and returns the exit status, stdout and
// stderr.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root, c := newRoot()
	var out, errb bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errb)
	code = execute(root, c, args)
	return code, out.String(), errb.String()
}

// TestCtlCommandLine: `subdash ctl`'s commands, made from ctl's table,
// take a command line as ctl always took it: flags before or after the
// arguments, an operation's flag before its name, single-dash long
// flags, ctl's flags before "ctl", "-" for stdin and "--" before a
// message that starts with "-".
func TestCtlCommandLine(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(8))
	srv, _ := controlkit.Serve(t, s)
	sock := srv.Path()
	var ids []string
	for _, tc := range []struct {
		stdin         string
		args          []string
		message, name string
	}{
		{"", []string{"ctl", "spawn", "one", "--task-name", "one", "--socket", sock}, "one", "one"},
		{"", []string{"ctl", "--socket", sock, "--task-name", "two", "spawn", "two"}, "two", "two"},
		{"", []string{"ctl", "-socket", sock, "spawn", "-task-name=three", "three"}, "three", "three"},
		{"", []string{"--socket", sock, "ctl", "spawn", "--", "-four"}, "-four", ""},
		{"five\n", []string{"ctl", "spawn", "-", "-socket", sock}, "five", ""},
	} {
		code, out, errOut := runCLI(t, tc.stdin, tc.args...)
		var sp proto.SpawnResult
		if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &sp) != nil || sp.LastMessage != tc.message || sp.TaskName != tc.name {
			t.Fatalf("subdash %q: exit %d, stdout %q, stderr %q; want an agent %q with message %q", tc.args, code, out, errOut, tc.name, tc.message)
		}
		ids = append(ids, sp.AgentID)
	}
	code, out, errOut := runCLI(t, "", "ctl", "wait", ids[0], "--socket", sock, ids[1], "-timeout-ms", "300000")
	var wr proto.WaitResult
	if code != 0 || json.Unmarshal([]byte(out), &wr) != nil || len(wr.Status) == 0 || wr.TimedOut {
		t.Fatalf("ctl wait ID --socket S ID -timeout-ms N: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "ctl", "--tree", "list", "--socket="+sock)
	if code != 0 || !strings.HasPrefix(out, "/root\n") || !strings.Contains(out, "three") {
		t.Errorf("ctl --tree list: exit %d, stdout %q, stderr %q; want the tree", code, out, errOut)
	}
	// a failure: "<tool> failed: <message>", exit 1, nothing on stdout
	code, out, errOut = runCLI(t, "", "ctl", "send", "nope", "x", "--interrupt=false", "--socket", sock)
	if code != 1 || out != "" || errOut != "send_input failed: agent not found: nope\n" {
		t.Errorf("ctl send to an unknown agent: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCtlCommandLineMistakes: what cobra finds wrong in ctl's command
// line (no operation, an unknown one, an unknown flag, a flag of another
// operation, a missing value) is a usage error said as ctl says them:
// exit 2, "subdash ctl: <what is wrong>" in one safe line, then the usage
// line, nothing on stdout.
func TestCtlCommandLineMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ctl"}, "missing operation"},
		{[]string{"ctl", "frob"}, `unknown operation "frob"`},
		{[]string{"ctl", "sned", "a", "b"}, `unknown operation "sned"; did you mean seen or send?`},
		{[]string{"ctl", "list", "--bogus"}, "unknown flag --bogus"},
		{[]string{"ctl", "list", "-bogus"}, "unknown flag -bogus"},
		{[]string{"ctl", "--bogus", "list"}, "unknown flag --bogus"},
		{[]string{"ctl", "list", "--interrupt"}, "list does not take --interrupt; usage: subdash ctl list [--tree]"},
		{[]string{"ctl", "list", "--socket"}, "flag --socket needs a value"},
		{[]string{"ctl", "send", "a", "b", "--queue=maybe"}, `flag --queue takes no value or true/false, not "maybe"`},
		{[]string{"ctl", "list", "--fr\x1b]0;pwned\aob"}, "unknown flag --frob"},
		{[]string{"ctl", "help", "frob"}, `no operation "frob" to help with`},
		{[]string{"ctl", "send", "a"}, "send: missing argument; usage: subdash ctl send ID MSG [--interrupt | --queue | --steer]"},
		{[]string{"ctl", "wait", "x", "--timeout-ms", "soon"}, `wait: --timeout-ms needs a whole number, not "soon"`},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		want := "subdash ctl: " + tc.want + "\nusage: subdash ctl [--dir DIR | --socket PATH | --host ssh://host/dir] <op> [args]; ops: spawn, send,"
		if code != 2 || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 2 {
			t.Errorf("subdash %q: exit %d, stdout %q, stderr %q; want exit 2 and %q…", tc.args, code, out, errOut, want)
		}
	}
}

// TestCtlHelp: `subdash ctl --help` (and the older `subdash ctl help`)
// lists every operation by its synopsis and what it does; an operation's
// own help (`subdash ctl send --help`, `subdash ctl help send`, `subdash
// help ctl send`) says what each of its flags and ctl's does, from ctl's
// table.
func TestCtlHelp(t *testing.T) {
	for _, args := range [][]string{{"ctl", "--help"}, {"ctl", "-help"}, {"ctl", "help"}, {"help", "ctl"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || errOut != "" {
			t.Errorf("subdash %q: exit %d, stderr %q", args, code, errOut)
		}
		for _, op := range ctl.Ops {
			if !strings.Contains(out, strings.TrimSpace(op.Name+" "+op.Args)) || !strings.Contains(strings.ToLower(out), strings.ToLower(op.Usage)) {
				t.Errorf("subdash %q does not list %s %s: %s", args, op.Name, op.Args, op.Usage)
			}
		}
	}
	for _, op := range ctl.Ops {
		for _, args := range [][]string{{"ctl", op.Name, "--help"}, {"ctl", "help", op.Name}, {"help", "ctl", op.Name}} {
			code, out, errOut := runCLI(t, "", args...)
			if code != 0 || errOut != "" || !strings.Contains(out, "subdash ctl "+op.Name) {
				t.Errorf("subdash %q: exit %d, stderr %q, stdout %q", args, code, errOut, out)
				continue
			}
			for _, f := range append(op.Flags, ctl.Globals...) {
				if !strings.Contains(out, "--"+f.Name) || !strings.Contains(strings.ToLower(out), strings.ToLower(f.Usage)) {
					t.Errorf("subdash %q does not say what --%s does (%q):\n%s", args, f.Name, f.Usage, out)
				}
			}
		}
	}
}

// TestCtlCompletions: the shells complete ctl's operations, their flags
// and the values of a flag that takes one of a few words.
func TestCtlCompletions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"ctl", ""}, func() []string {
			var names []string
			for _, op := range ctl.Ops {
				names = append(names, op.Name+"\t")
			}
			return names
		}()},
		{[]string{"ctl", "send", "--"}, []string{"--interrupt\t", "--queue\t", "--steer\t", "--socket\t", "--dir\t"}},
		{[]string{"ctl", "close", "--status", ""}, []string{"running\n", "completed\n", "errored\n"}},
		{[]string{"ctl", "-socket", "s", "spawn", "x", "-"}, []string{"--task-name\t"}},
	} {
		code, out, errOut := runCLI(t, "", append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("completion of subdash %q: exit %d, stderr %q, stdout %q; want %q", tc.args, code, errOut, out, w)
			}
		}
	}
}

// TestFlagsHaveOneMeaning: a long flag's name takes a value on every
// command that has it, or on none, since longFlags reads a single-dash
// flag by its name before cobra knows the command.
func TestFlagsHaveOneMeaning(t *testing.T) {
	root, _ := newRoot()
	takes := map[string]string{}
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		each := func(f *pflag.Flag) {
			value := map[bool]string{true: "a value", false: "none"}[f.NoOptDefVal == ""]
			if was, ok := takes[f.Name]; ok && was != value {
				t.Errorf("--%s takes %s on %s and %s elsewhere", f.Name, value, c.CommandPath(), was)
			}
			takes[f.Name] = value
		}
		c.Flags().VisitAll(each)
		c.PersistentFlags().VisitAll(each)
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// runCtl runs the operation args[0] with the rest of args as its command
// line, with a fake environment, and returns the exit status, stdout and
// stderr (a usage error said as ctl says it). The command line is read
// by the table, as package main's commands made from it read it: a flag
// "--name value" or "--name=value" anywhere, a switch given as "true",
// "--" before arguments only.
func runCtl(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	op, ok := Named(args[0])
	if !ok {
		t.Fatalf("no operation %q", args[0])
	}
	var out, errb bytes.Buffer
	in := Input{Flags: map[string]string{}, Lists: map[string][]string{}, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	var target Target
	globals := map[string]*string{"dir": &target.Dir, "socket": &target.Socket, "host": &target.Host}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			in.Args = append(in.Args, args[i+1:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") {
			in.Args = append(in.Args, a)
			continue
		}
		flags := slices.Concat(op.Flags, Globals)
		j := slices.IndexFunc(flags, func(f Flag) bool { return f.Name == name })
		switch {
		case j < 0:
			t.Fatalf("%s takes no flag %s", op.Name, a)
		case flags[j].Value == "":
			val = "true"
		case !hasVal:
			i++
			val = args[i]
		}
		if p, ok := globals[name]; ok {
			*p = val
			continue
		}
		in.Flags[name] = val
		if flags[j].Repeat {
			in.Lists[name] = append(in.Lists[name], val)
		}
	}
	code, err := run(context.Background(), op, target, in, func(k string) string { return env[k] })
	if u := (*UsageError)(nil); errors.As(err, &u) {
		u.Say(&errb)
	} else if err != nil {
		t.Fatalf("ctl %q: %v, not a usage error", args, err)
	}
	return code, out.String(), errb.String()
}

// TestCtlUsageErrors: a command line the operation cannot use is a usage
// error (exit 2) that says what is wrong and what the operation takes,
// with ctl's usage line, before anything is sent. The mistakes cobra
// finds (an unknown operation or flag) are package main's tests'.
func TestCtlUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"spawn"}, "spawn: missing argument; usage: subdash ctl spawn MSG"},
		{[]string{"spawn", "a", "b"}, `unexpected argument "b"`},
		{[]string{"send", "ID"}, "send: missing argument; usage: subdash ctl send ID MSG [--interrupt | --queue | --steer]"},
		{[]string{"send", "ID", "x", "--interrupt", "--queue"}, "send: --interrupt and --queue exclude each other"},
		{[]string{"send", "ID", "x", "--steer", "--queue"}, "send: --steer excludes --interrupt and --queue"},
		{[]string{"close"}, "close: missing argument"},
		{[]string{"list", "x"}, `unexpected argument "x"`},
		{[]string{"wait", "x", "--timeout-ms", "soon"}, `--timeout-ms needs a whole number, not "soon"`},
		{[]string{"wait"}, "wait: missing argument; usage: subdash ctl wait ID... [--timeout-ms N]"},
		{[]string{"wait", "x", "--timeout-ms", "-5"}, "wait: --timeout-ms must be greater than zero, not -5 (it is clamped to 10000..300000)"},
		{[]string{"logs", "x", "--submission", "0"}, "--submission needs a sequence number"},
		{[]string{"search", "x", "--limit", "0"}, "search: --limit must be at least 1, not 0"},
		{[]string{"spawn", "x", "--task-name", strings.Repeat("a", 257)}, "task_name is 257 bytes, longer than the limit of 256; use a shorter name"},
		{[]string{"spawn", "x", "--task-name", "a\x1b]0;pwned\ab"}, "spawn: task_name"},
		{[]string{"list", "--dir", "d", "--host", "ssh://h/d"}, "give --dir, --socket or --host, not more than one"},
		{[]string{"list", "--host", "nope"}, "not an ssh:// target"},
	} {
		code, out, errOut := runCtl(t, nil, "", tc.args...)
		if strings.ContainsAny(errOut, "\x1b\a") {
			t.Errorf("ctl %q: stderr %q holds an escape or a bell", tc.args, errOut)
		}
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "subdash ctl: ") || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "\nusage: subdash ctl") {
			t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 2 and %q with a usage line", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestCtlAgainstAServer(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(4))
	srv, _ := controlkit.Serve(t, s)
	env := map[string]string{"SUBDASH_SOCKET": srv.Path()}

	// A message of "-" comes from stdin, unchanged but trimmed.
	code, out, errOut := runCtl(t, env, "line one\n", "spawn", "-")
	var sp proto.SpawnResult
	if code != ExitOK || errOut != "" || json.Unmarshal([]byte(out), &sp) != nil || sp.LastMessage != "line one" {
		t.Fatalf("spawn -: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.HasPrefix(out, "{\n  \"agent_id\": ") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("output is not indented JSON with a final newline: %q", out)
	}
	code, out, _ = runCtl(t, env, "", "wait", sp.AgentID, "--timeout-ms", "300000")
	if code != ExitOK || !strings.Contains(out, `"last_output": "got: line one"`) {
		t.Fatalf("wait: exit %d, stdout %q", code, out)
	}
	code, out, _ = runCtl(t, env, "", "logs", sp.AgentID)
	if code != ExitOK || out != "got: line one\n" {
		t.Fatalf("logs: exit %d, stdout %q", code, out)
	}

	// Errors: "<tool> failed: <message>", exit 1, nothing on stdout.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"spawn", " "}, "spawn_agent failed: message must not be empty\n"},
		{[]string{"send", "nope", "x"}, "send_input failed: agent not found: nope\n"},
		{[]string{"interrupt", sp.AgentID}, "interrupt failed: agent " + sp.AgentID + " is not running\n"},
		{[]string{"close", "nope"}, "close_agent failed: agent not found: nope\n"},
		{[]string{"resume", "nope"}, "resume_agent failed: agent not found: nope\n"},
		{[]string{"logs", "nope"}, "logs failed: agent not found: nope\n"},
		{[]string{"logs", sp.AgentID, "--submission", "7"}, "logs failed: agent " + sp.AgentID + " has no submission 7; it has 1\n"},
		// an id the user typed comes back without its escape sequence
		{[]string{"close", "no\x1b]0;pwned\ape\x1b[2J"}, "close_agent failed: agent not found: nope\n"},
	} {
		code, out, errOut := runCtl(t, env, "", tc.args...)
		if code != ExitError || out != "" || errOut != tc.want {
			t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 1, %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// A log file that is gone is an error, not an empty log, plain or raw.
	path, _ := s.LogPath(sp.AgentID, 0)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	for _, raw := range [][]string{nil, {"--raw"}} {
		code, out, errOut := runCtl(t, env, "", append([]string{"logs", sp.AgentID}, raw...)...)
		if want := "logs failed: the log file " + path + " of submission 1 of agent " + sp.AgentID + " is gone"; code != ExitError || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("logs %v of a removed log: exit %d, stdout %q, stderr %q", raw, code, out, errOut)
		}
	}
}

func TestCtlPicksTheSocket(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(4))
	srv, _ := controlkit.Serve(t, s)
	dir := s.Config().Dir
	runtime := t.TempDir()
	def := socket.Default(dir, runtime, os.Getuid())
	none := filepath.Join(t.TempDir(), "none.sock")
	for _, tc := range []struct {
		name   string
		env    map[string]string
		args   []string
		socket string // the socket ctl must have used
	}{
		{"--socket wins over the environment", map[string]string{"SUBDASH_SOCKET": none}, []string{"list", "--socket", srv.Path()}, srv.Path()},
		{"SUBDASH_SOCKET wins over --dir", map[string]string{"SUBDASH_SOCKET": srv.Path()}, []string{"list", "--dir", dir}, srv.Path()},
		{"--dir picks the default socket", map[string]string{"XDG_RUNTIME_DIR": runtime}, []string{"list", "--dir", dir}, def},
	} {
		code, out, errOut := runCtl(t, tc.env, "", tc.args...)
		if tc.socket == srv.Path() {
			if code != ExitOK || !strings.Contains(out, `"agents": []`) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, code, out, errOut)
			}
			continue
		}
		want := "list_agents failed: no subdash is serving " + dir + " (socket " + tc.socket + "); start subdash or subdash serve\n"
		if code != ExitError || errOut != want {
			t.Errorf("%s: exit %d, stderr %q; want %q", tc.name, code, errOut, want)
		}
	}
}

// TestOpsTable: every operation can be listed and called, its synopsis
// names each of its flags, each flag says what it does, and a flag has
// one meaning: a value, or none, whichever operation takes it (`subdash`
// reads a single-dash long flag by its name before it knows the
// operation).
func TestOpsTable(t *testing.T) {
	takes := map[string]bool{}
	for _, f := range Globals {
		takes[f.Name] = f.Value != ""
	}
	for _, op := range Ops {
		if op.Name == "" || op.Usage == "" || strings.Contains(op.Usage, "\n") || op.Call == nil || op.MaxArgs >= 0 && op.MaxArgs < op.MinArgs {
			t.Errorf("op %q: %+v", op.Name, op)
		}
		for _, f := range op.Flags {
			if v, ok := takes[f.Name]; ok && v != (f.Value != "") {
				t.Errorf("--%s takes a value for one operation and none for another (%s)", f.Name, op.Name)
			}
			takes[f.Name] = f.Value != ""
			if !strings.Contains(op.Args, "--"+f.Name) {
				t.Errorf("%s: --%s is not in its synopsis %q", op.Name, f.Name, op.Args)
			}
			if f.Usage == "" || strings.Contains(f.Usage, "\n") {
				t.Errorf("%s: --%s says what it does in no line or in more than one: %q", op.Name, f.Name, f.Usage)
			}
		}
	}
}

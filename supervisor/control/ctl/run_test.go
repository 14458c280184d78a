package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

func TestParseCtlFlagsAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		pos   []string
		flags map[string]string
		dir   string
	}{
		{[]string{"send", "ID", "MSG", "--interrupt"}, []string{"send", "ID", "MSG"}, map[string]string{"interrupt": "true"}, ""},
		{[]string{"--interrupt", "send", "ID", "MSG"}, []string{"send", "ID", "MSG"}, map[string]string{"interrupt": "true"}, ""},
		{[]string{"send", "--interrupt=false", "ID", "MSG"}, []string{"send", "ID", "MSG"}, map[string]string{}, ""},
		{[]string{"wait", "a", "--timeout-ms", "5", "b", "-dir=/d"}, []string{"wait", "a", "b"}, map[string]string{"timeout-ms": "5"}, "/d"},
		{[]string{"spawn", "-"}, []string{"spawn", "-"}, map[string]string{}, ""},
		{[]string{"spawn", "--", "--not-a-flag"}, []string{"spawn", "--not-a-flag"}, map[string]string{}, ""},
		{[]string{"logs", "--submission=2", "ID", "--dir", "x"}, []string{"logs", "ID"}, map[string]string{"submission": "2"}, "x"},
	} {
		l, err := parse(tc.args)
		if err != nil || !reflect.DeepEqual(l.pos, tc.pos) || !reflect.DeepEqual(l.flags, tc.flags) || l.dir != tc.dir {
			t.Errorf("parse(%q) = %+v, %v; want pos %q flags %v dir %q", tc.args, l, err, tc.pos, tc.flags, tc.dir)
		}
	}
}

// runCtl runs ctl with a fake environment and returns exit status, stdout
// and stderr.
func runCtl(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestCtlUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing operation"},
		{[]string{"frob"}, `unknown operation "frob"`},
		{[]string{"spawn"}, "spawn: missing argument; usage: subdash ctl spawn MSG"},
		{[]string{"spawn", "a", "b"}, `unexpected argument "b"`},
		{[]string{"send", "ID"}, "send: missing argument; usage: subdash ctl send ID MSG [--interrupt | --queue | --steer]"},
		{[]string{"close"}, "close: missing argument"},
		{[]string{"list", "x"}, `unexpected argument "x"`},
		{[]string{"list", "--interrupt"}, "list does not take --interrupt"},
		{[]string{"wait", "x", "--timeout-ms", "soon"}, `--timeout-ms needs a whole number, not "soon"`},
		{[]string{"wait"}, "wait: missing argument; usage: subdash ctl wait ID... [--timeout-ms N]"},
		{[]string{"wait", "x", "--timeout-ms", "-5"}, "wait: --timeout-ms must be greater than zero, not -5 (it is clamped to 10000..300000)"},
		{[]string{"logs", "x", "--submission", "0"}, "--submission needs a sequence number"},
		{[]string{"list", "--frob"}, "unknown flag --frob"},
		{[]string{"list", "--socket"}, "flag --socket needs a value"},
		{[]string{"spawn", "x", "--task-name", strings.Repeat("a", 257)}, "task_name is 257 bytes, longer than the limit of 256; use a shorter name"},
		{[]string{"list", "--fr\x1b]0;pwned\aob"}, "unknown flag --frob"},
	} {
		code, out, errOut := runCtl(t, nil, "", tc.args...)
		if strings.ContainsAny(errOut, "\x1b\a") {
			t.Errorf("ctl %q: stderr %q holds an escape or a bell", tc.args, errOut)
		}
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage: subdash ctl") {
			t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 2 and %q with a usage line", tc.args, code, out, errOut, tc.want)
		}
	}
	code, out, _ := runCtl(t, nil, "", "help")
	if code != ExitOK || out != Usage {
		t.Errorf("ctl help: exit %d, stdout %q", code, out)
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
		{"SUBDASH_SOCKET wins over --dir", map[string]string{"SUBDASH_SOCKET": srv.Path()}, []string{"--dir", dir, "list"}, srv.Path()},
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

// TestOpsTable: every operation can be listed and called, and a flag has
// one meaning: a value, or none, whichever operation takes it (parse
// reads a flag before it knows the operation).
func TestOpsTable(t *testing.T) {
	takes := map[string]bool{}
	for _, f := range Globals {
		takes[f.Name] = f.Value != ""
	}
	for _, op := range Ops {
		if op.Name == "" || op.Usage == "" || op.Call == nil || op.MaxArgs >= 0 && op.MaxArgs < op.MinArgs {
			t.Errorf("op %q: %+v", op.Name, op)
		}
		if !strings.Contains(Usage, "\n  "+strings.TrimSpace(op.Name+" "+op.Args)) {
			t.Errorf("the help does not list %s %s", op.Name, op.Args)
		}
		for _, f := range op.Flags {
			if v, ok := takes[f.Name]; ok && v != (f.Value != "") {
				t.Errorf("--%s takes a value for one operation and none for another (%s)", f.Name, op.Name)
			}
			takes[f.Name] = f.Value != ""
			if !strings.Contains(op.Args, "--"+f.Name) {
				t.Errorf("%s: --%s is not in its synopsis %q", op.Name, f.Name, op.Args)
			}
		}
	}
}

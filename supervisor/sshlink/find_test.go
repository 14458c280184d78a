package sshlink

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runFinder runs finderScript as the remote login shell would (sh -s with
// the link's two words), with PATH and HOME as given; it returns stdout,
// stderr and the exit status.
func runFinder(t *testing.T, path, home, command, dir string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sh -s -- "+shellQuote(command)+" "+shellQuote(dir))
	cmd.Env = []string{"PATH=" + path, "HOME=" + home}
	cmd.Stdin = strings.NewReader(finderScript)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	status := exitStatus(cmd.Run())
	return out.String(), strings.TrimSpace(errs.String()), status
}

// fakeSubdash writes an executable named subdash in dir that prints its
// name and arguments.
func fakeSubdash(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "subdash")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho \"$0 $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTheFinderLooksWhereSubdashIs: the remote command finds subdash on
// PATH, else in ~/go/bin (where go install puts it, on no ssh PATH), runs
// the one the target names (a path, ~/ being the remote home), and says
// where it looked when there is none.
func TestTheFinderLooksWhereSubdashIs(t *testing.T) {
	base := t.TempDir()
	home, bin := filepath.Join(base, "home"), filepath.Join(base, "bin")
	sys := "/usr/bin:/bin"
	onPath := fakeSubdash(t, bin)
	if out, _, st := runFinder(t, bin+":"+sys, home, "", "/src/app"); st != 0 || out != onPath+" bridge --print-socket --dir /src/app\n" {
		t.Fatalf("on PATH: %q, status %d", out, st)
	}
	goBin := fakeSubdash(t, filepath.Join(home, "go", "bin"))
	if out, _, st := runFinder(t, sys, home, "", "/src/my app"); st != 0 || out != goBin+" bridge --print-socket --dir /src/my app\n" {
		t.Fatalf("in ~/go/bin: %q, status %d", out, st)
	}
	l := &Link{t: Target{Subdash: "~/go/bin/subdash"}, o: Options{}.withDefaults()}
	if out, _, st := runFinder(t, sys, home, l.remoteCommand(), "/d"); st != 0 || out != goBin+" bridge --print-socket --dir /d\n" {
		t.Fatalf("?subdash=~/go/bin/subdash: %q, status %d", out, st)
	}
	l.t.Subdash = onPath
	if out, _, st := runFinder(t, sys, home, l.remoteCommand(), "/d"); st != 0 || out != onPath+" bridge --print-socket --dir /d\n" {
		t.Fatalf("?subdash=%s: %q, status %d", onPath, out, st)
	}
	l.t.Subdash = "/opt/nope/subdash"
	if _, errs, st := runFinder(t, sys, home, l.remoteCommand(), "/d"); st != 127 || !strings.Contains(errs, "/opt/nope/subdash") {
		t.Fatalf("a named subdash that is not there: status %d, %q", st, errs)
	}
	if _, errs, st := runFinder(t, sys, filepath.Join(base, "nobody"), "", "/d"); st != 127 ||
		!strings.Contains(errs, "no subdash on ") || !strings.Contains(errs, "PATH="+sys) || !strings.Contains(errs, "nobody/go/bin") {
		t.Fatalf("no subdash anywhere: status %d, %q", st, errs)
	}
}

// TestWhatTheBridgeSays: the link reads the bridge's two lines, and
// says, naming both sides' versions and what to upgrade, when the other
// side is no bridge, an older subdash, or one of another version.
func TestWhatTheBridgeSays(t *testing.T) {
	l := &Link{t: Target{Host: "buildbox", Dir: "/src/app"}, o: Options{Protocol: 1, Version: "v1.4.0"}.withDefaults()}
	say := func(status int, out, stderr string) error {
		var e tail
		_, _ = e.Write([]byte(stderr))
		l.hello, l.remote = nil, ""
		return l.readBridge(status, []byte(out), &e)
	}
	hello := `{"subdash_bridge":1,"protocol":1,"version":"v1.4.0","host":"buildbox"}` + "\n"
	if err := say(0, hello+`{"socket":"/tmp/subdash-1000/ab.sock","info":{"pid":4242,"dir":"/src/app","protocol":1}}`+"\n", ""); err != nil || l.remote != "/tmp/subdash-1000/ab.sock" || l.info.PID != 4242 {
		t.Fatalf("found: %v, %q, %+v", err, l.remote, l.info)
	}
	cases := []struct {
		status      int
		out, stderr string
		kind        Kind
		says        []string
	}{
		{1, hello + `{"error":"no subdash serves /src/app on buildbox (looked at: …); start one there: cd /src/app && subdash serve","code":"no_host"}` + "\n", "",
			NoHost, []string{"cd /src/app && subdash serve"}},
		{3, hello + `{"error":"no folder /src/app on buildbox","code":"no_folder"}` + "\n", "", NoFolder, []string{"no folder /src/app on buildbox"}},
		{2, "", `subdash: unexpected argument "bridge"; messages are given with --spawn; see subdash --help`, Version,
			[]string{"has no bridge command", "older than this one (v1.4.0)", "install this version of subdash there"}},
		{127, "", "bash: line 1: subdash: command not found", NoSubdash, []string{"command not found", "ssh://buildbox/src/app?subdash=/path/to/subdash", "SUBDASH_REMOTE_COMMAND"}},
		{0, `{"subdash_bridge":2,"protocol":1,"version":"v2.0.0"}` + "\n", "", Version,
			[]string{"the subdash there (v2.0.0) prints bridge version 2, this one (v1.4.0) reads version 1", "upgrade this subdash"}},
		{0, `{"subdash_bridge":1,"protocol":0,"version":"v0.9.0"}` + "\n", "", Version,
			[]string{"the subdash there (v0.9.0) speaks control protocol v0, this one (v1.4.0) v1", "upgrade the subdash there"}},
		{0, "hello world\n", "", NoSubdash, []string{"did not answer as subdash's bridge (exit 0"}},
	}
	for _, c := range cases {
		err := say(c.status, c.out, c.stderr)
		le, ok := err.(*Error)
		if !ok || le.Kind != c.kind {
			t.Errorf("status %d, %q: %v (kind %v), want kind %d", c.status, c.out+c.stderr, err, le, c.kind)
			continue
		}
		le.Target = l.t.Name()
		for _, s := range c.says {
			if !strings.Contains(le.Error(), s) {
				t.Errorf("status %d: %q does not say %q", c.status, le.Error(), s)
			}
		}
	}
}

// TestForwardSpec: a socket path with a colon is bracketed for -L.
func TestForwardSpec(t *testing.T) {
	if got := forwardSpec("/tmp/l/host.sock", "/run/a:b/h.sock"); got != "/tmp/l/host.sock:[/run/a:b/h.sock]" {
		t.Fatal(got)
	}
	if got := forwardSpec("/tmp/l/host.sock", "/tmp/subdash-0/ab.sock"); got != "/tmp/l/host.sock:/tmp/subdash-0/ab.sock" {
		t.Fatal(got)
	}
}

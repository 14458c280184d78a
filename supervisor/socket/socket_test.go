package socket

import (
	"path/filepath"
	"testing"
)

// The default socket is under /tmp even when TMPDIR points elsewhere, so a
// dashboard and an MCP client with its own TMPDIR find the same host (SPEC
// §6).
func TestDefaultIgnoresTMPDIR(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	got := Default("/some/dir", "", 1000)
	if filepath.Dir(got) != "/tmp/subdash-1000" {
		t.Errorf("socket %s: want it in /tmp/subdash-1000 whatever TMPDIR says", got)
	}
	if got != Default("/some/dir", "", 1000) || got == Default("/other", "", 1000) {
		t.Errorf("socket path is not a function of the directory: %s", got)
	}
}

// The flag wins over the environment, which wins over the directory's
// default; blanks around either are not part of the path.
func TestResolveOrder(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, named := Resolve(" /x.sock ", "/d", getenv, 7); got != "/x.sock" || !named {
		t.Errorf("flag: %q named=%v", got, named)
	}
	env[Env] = " /e.sock\n"
	if got, named := Resolve("", "/d", getenv, 7); got != "/e.sock" || !named {
		t.Errorf("env: %q named=%v", got, named)
	}
	delete(env, Env)
	env["XDG_RUNTIME_DIR"] = "/run/user/7"
	if got, named := Resolve("  ", "/d", getenv, 7); got != Default("/d", "/run/user/7", 7) || named || filepath.Dir(got) != "/run/user/7/subdash" {
		t.Errorf("default: %q named=%v", got, named)
	}
}

package sshlink

import (
	"strings"
	"testing"
)

// TestParseTarget: the shapes a user types, what each names, and the
// message of each mistake (it names the target and gives the shape).
func TestParseTarget(t *testing.T) {
	good := []struct {
		in   string
		want Target
		name string
	}{
		{"ssh://buildbox/src/app", Target{Host: "buildbox", Dir: "/src/app"}, "ssh://buildbox/src/app"},
		{"ssh://me@buildbox:2222/src/app/", Target{User: "me", Host: "buildbox", Port: 2222, Dir: "/src/app"}, "ssh://me@buildbox:2222/src/app"},
		{"ssh://[::1]:22/a%20b", Target{Host: "::1", Port: 22, Dir: "/a b"}, "ssh://[::1]:22/a b"},
		{"ssh://h?socket=/run/x.sock", Target{Host: "h", Socket: "/run/x.sock"}, "ssh://h?socket=/run/x.sock"},
		{"ssh://h/d?socket=/x.sock&subdash=~/go/bin/subdash", Target{Host: "h", Dir: "/d", Socket: "/x.sock", Subdash: "~/go/bin/subdash"}, "ssh://h/d"},
	}
	for _, g := range good {
		got, err := ParseTarget(g.in)
		if err != nil || got != g.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
			continue
		}
		if got.Name() != g.name {
			t.Errorf("%q: Name() = %q, want %q", g.in, got.Name(), g.name)
		}
		if again, err := ParseTarget(got.String()); err != nil || again != got {
			t.Errorf("%q: String() %q parses to %+v, %v", g.in, got.String(), again, err)
		}
	}
	bad := []struct{ in, says string }{
		{"buildbox:/src", "not an ssh:// target"},
		{"ssh:///src", "no host"},
		{"ssh://h", "no folder"},
		{"ssh://h/", "no folder"},
		{"ssh://h:0/d", `port "0" is not a number from 1 to 65535`},
		{"ssh://h:99999/d", "is not a number from 1 to 65535"},
		{"ssh://me:secret@h/d", "a password in the target is not taken"},
		{"ssh://-oProxyCommand=sh/d", "may not start with -"},
		{"ssh://-l@h/d", "may not start with -"},
		{"ssh://h/d?sock=/x", `unknown option "sock"`},
		{"ssh://h/d?socket=x.sock", "socket=x.sock is not an absolute path"},
		{"ssh://h/d#x", "escape it as %23"},
	}
	for _, b := range bad {
		_, err := ParseTarget(b.in)
		if err == nil || !strings.Contains(err.Error(), b.says) || !strings.Contains(err.Error(), "target "+b.in+":") ||
			!strings.Contains(err.Error(), "the shape is ssh://[user@]host[:port]/abs/dir") {
			t.Errorf("ParseTarget(%q): %v; want an error naming it that says %q and gives the shape", b.in, err, b.says)
		}
	}
	if !IsTarget(" ssh://h/d") || IsTarget("/src/app") || IsTarget("ssh:/h") {
		t.Error("IsTarget tells a target from a folder by its ssh:// prefix")
	}
}

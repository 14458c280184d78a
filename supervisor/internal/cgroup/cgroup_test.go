package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMountDir: a cgroup's folder is found under the mount that shows
// it, also one whose root is not the hierarchy's (a container, a bind
// mount), and not under one that does not show it.
func TestMountDir(t *testing.T) {
	for _, c := range []struct {
		m          Mount
		path, want string
		ok         bool
	}{
		{Mount{Point: "/sys/fs/cgroup/unified", Root: "/"}, "/", "/sys/fs/cgroup/unified", true},
		{Mount{Point: "/sys/fs/cgroup/unified", Root: "/"}, "/a/b", "/sys/fs/cgroup/unified/a/b", true},
		{Mount{Point: "/sys/fs/cgroup", Root: "/docker/x"}, "/docker/x/sub", "/sys/fs/cgroup/sub", true},
		{Mount{Point: "/sys/fs/cgroup", Root: "/docker/x"}, "/docker/xy", "", false},
		{Mount{Point: "/sys/fs/cgroup", Root: "/docker/x"}, "/other", "", false},
	} {
		got, ok := c.m.Dir(c.path)
		if got != c.want || ok != c.ok {
			t.Errorf("%+v.Dir(%q) = %q, %v; want %q, %v", c.m, c.path, got, ok, c.want, c.ok)
		}
	}
	if got := unescape(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("unescape: %q", got)
	}
}

// TestWritableIsThisProcesssCgroup: where a writable v2 hierarchy exists,
// Writable names this process's own cgroup in it, wherever it is mounted
// (this machine: /sys/fs/cgroup/unified beside the v1 controllers), and
// that cgroup's cgroup.procs lists this process.
func TestWritableIsThisProcesssCgroup(t *testing.T) {
	dir, mount, ok := Writable()
	if !ok {
		t.Skip("no cgroup v2 hierarchy this process may write in")
	}
	if !strings.HasPrefix(dir, mount) {
		t.Errorf("%s is not under its mount %s", dir, mount)
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	self := false
	for _, f := range strings.Fields(string(procs)) {
		self = self || f == strconv.Itoa(os.Getpid())
	}
	if !self {
		t.Errorf("%s/cgroup.procs does not list this process", dir)
	}
}

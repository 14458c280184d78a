package memohome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestUserHome(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.memo"},
		{map[string]string{"HOME": "/h", "MEMO_HOME": "/m"}, "/m"},
		{map[string]string{"HOME": "/h", "MEMO_HOME": "~/memo"}, "/h/memo"},
		{map[string]string{"HOME": "/h", "MEMO_HOME": " ~ "}, "/h"},
		{map[string]string{}, ""},
	} {
		if got := UserHome(env(c.env)); got != c.want {
			t.Errorf("UserHome(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckConfig: a config declares a provider in any of TOML's ways
// Memo reads; a missing file, a file without one and no home at all are
// errors that name the file and what to do.
func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	for _, ok := range []string{
		"current_provider = \"stub\"\n[[providers.stub]]\nname = \"stub\"\n",
		"[providers.deepseek]\nmodel = \"x\"\n",
		"  [[ providers.a ]]\n",
		"providers.a = { model = \"x\" }\n",
		"providers = { a = { model = \"x\" } }\n",
	} {
		write(t, filepath.Join(dir, "config.toml"), ok)
		if err := CheckConfig(dir); err != nil {
			t.Errorf("config %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "current_provider = \"x\"\n# [[providers.x]]\n", "providers_note = 1\n", "providers = []\n"} {
		write(t, filepath.Join(dir, "config.toml"), bad)
		if err := CheckConfig(dir); err == nil || !strings.Contains(err.Error(), "declares no provider") || !strings.Contains(err.Error(), "run memo once in a terminal") {
			t.Errorf("config %q: %v", bad, err)
		}
	}
	err := CheckConfig(filepath.Join(dir, "none"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "none", "config.toml")+": no such file or directory") {
		t.Errorf("no config: %v", err)
	}
	if err := CheckConfig(""); err == nil || !strings.Contains(err.Error(), "set MEMO_HOME") {
		t.Errorf("no home: %v", err)
	}
}

// TestPrepare: an agent's home links the user's config and, where they
// exist, Agents.md, skills and auth; preparing again refreshes the links
// (a config.toml Memo wrote is replaced by the link, a link whose target
// is gone is removed) and keeps what Memo wrote itself (its sessions).
func TestPrepare(t *testing.T) {
	user := t.TempDir()
	write(t, filepath.Join(user, "config.toml"), "[[providers.a]]\n")
	write(t, filepath.Join(user, "skills", "mine", "SKILL.md"), "x")
	home := filepath.Join(t.TempDir(), "agent", "memo-home")
	if err := Prepare(home, user); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home: %v %v", fi.Mode(), err)
	}
	links := func() map[string]string {
		got := map[string]string{}
		entries, _ := os.ReadDir(home)
		for _, e := range entries {
			target, err := os.Readlink(filepath.Join(home, e.Name()))
			if err != nil {
				target = "(not a link)"
			}
			got[e.Name()] = target
		}
		return got
	}
	want := func(names ...string) string {
		var b []string
		for _, n := range names {
			b = append(b, n+"->"+filepath.Join(user, n))
		}
		return strings.Join(b, " ")
	}
	show := func(m map[string]string) string {
		var b []string
		for _, n := range []string{"Agents.md", "auth", "config.toml", "sessions", "skills"} {
			if v, ok := m[n]; ok {
				if v == "(not a link)" {
					b = append(b, n+" "+v)
				} else {
					b = append(b, n+"->"+v)
				}
			}
		}
		return strings.Join(b, " ")
	}
	if got := show(links()); got != want("config.toml", "skills") {
		t.Errorf("home holds %s, want %s", got, want("config.toml", "skills"))
	}
	// Memo wrote a config of its own and a session; the user got an
	// Agents.md and auth, and dropped skills.
	if err := os.Remove(filepath.Join(home, "config.toml")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "config.toml"), "[[providers.deepseek]]\n")
	write(t, filepath.Join(home, "sessions", "-w", "a.jsonl"), "{}\n")
	write(t, filepath.Join(user, "Agents.md"), "remember")
	write(t, filepath.Join(user, "auth", "mcp-oauth.json"), "{}")
	if err := os.RemoveAll(filepath.Join(user, "skills")); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(home, user); err != nil {
		t.Fatal(err)
	}
	if got, w := show(links()), want("Agents.md", "auth", "config.toml")+" sessions (not a link)"; got != w {
		t.Errorf("after preparing again: %s, want %s", got, w)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != "[[providers.a]]\n" {
		t.Errorf("config.toml reads %q, want the user's", b)
	}
}

// TestEncodeDir: the folder names Memo 0.9.1 gives sessions (memo.md §2).
func TestEncodeDir(t *testing.T) {
	for dir, want := range map[string]string{
		"/work/lab/homes/memo-lab/work/proj": "-work-lab-homes-memo-lab-work-proj",
		"/tmp/a b/c.d_e":                     "-tmp-a_b-c.d_e",
		"/":                                  "-root",
		"/x/é😀":                              "-x-___",
	} {
		if got := EncodeDir(dir); got != want {
			t.Errorf("EncodeDir(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestSessions: HasSession looks at the working directory's sessions only
// (what --prev continues); NewSession finds the file a run added, the
// newest when several.
func TestSessions(t *testing.T) {
	home := t.TempDir()
	if HasSession(home, "/w") {
		t.Error("an empty home has a session")
	}
	write(t, filepath.Join(home, "sessions", "-other", "1.jsonl"), "{}")
	if HasSession(home, "/w") {
		t.Error("a session of another folder counts")
	}
	before := Sessions(home)
	if NewSession(home, before) != "" {
		t.Error("a new session without a run")
	}
	a := filepath.Join(home, "sessions", "-w", "a.jsonl")
	b := filepath.Join(home, "sessions", "-w", "b.jsonl")
	write(t, a, "{}")
	write(t, b, "{}")
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	if !HasSession(home, "/w") {
		t.Error("no session of /w")
	}
	if got := NewSession(home, before); got != b {
		t.Errorf("NewSession = %q, want %q", got, b)
	}
}

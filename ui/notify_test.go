package ui

import (
	"strings"
	"testing"
	"unicode"
)

func TestResolveNotify(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		mode string
		env  func(string) string
		want Notify
	}{
		{"", env("TERM", "xterm-256color"), Notify{Bell: true, OSC: 9}},
		{"auto", env("TERM", "tmux-256color", "TMUX", "/tmp/tmux-0/default,1,0"), Notify{Bell: true, OSC: 9, Tmux: true}},
		{"auto", env("TERM", "xterm-256color", "VTE_VERSION", "7600"), Notify{Bell: true, OSC: 777}},
		{"auto", env("TERM", "rxvt-unicode-256color"), Notify{Bell: true, OSC: 777}},
		{"auto", env("TERM", "foot"), Notify{Bell: true, OSC: 777}},
		{"bell", env("TMUX", "x"), Notify{Bell: true, Tmux: true}},
		{"osc", env(), Notify{OSC: 9}},
		{"off", env("TMUX", "x"), Notify{}},
	} {
		got, err := ResolveNotify(c.mode, c.env)
		if err != nil || got != c.want {
			t.Errorf("ResolveNotify(%q) = %+v, %v; want %+v", c.mode, got, err, c.want)
		}
	}
	if _, err := ResolveNotify("loud", env()); err == nil || !strings.Contains(err.Error(), "use one of auto, bell, osc, off") {
		t.Errorf("bad mode: %v", err)
	}
}

func TestNotifySequence(t *testing.T) {
	text := "agent 3fa2c1d0 completed: fix it"
	for _, c := range []struct {
		n    Notify
		want string
	}{
		{Notify{Bell: true, OSC: 9}, "\a\x1b]9;subdash: " + text + "\x1b\\"},
		{Notify{Bell: true, OSC: 777}, "\a\x1b]777;notify;subdash;" + text + "\x1b\\"},
		{Notify{Bell: true, OSC: 9, Tmux: true}, "\a\x1bPtmux;\x1b\x1b]9;subdash: " + text + "\x1b\x1b\\\x1b\\"},
		{Notify{Bell: true}, "\a"},
		{Notify{OSC: 9}, "\x1b]9;subdash: " + text + "\x1b\\"},
		{Notify{}, ""},
	} {
		if got := string(c.n.Sequence(text)); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
	// Hostile text (from a remote host or an agent's message): control
	// characters, a BEL or ST that would end the OSC early, a progress
	// report's "4;", a megabyte.
	nasty := "4;3\a\x1b\\\x1b]9;x\x9c\r\n" + strings.Repeat("é", 1<<20)
	seq := string(Notify{OSC: 9}.Sequence(nasty))
	body := strings.TrimSuffix(strings.TrimPrefix(seq, "\x1b]9;"), "\x1b\\")
	if !strings.HasPrefix(body, "subdash: ") || len([]rune(body)) > maxNotifyBody+len("subdash: ") {
		t.Fatalf("body %q", body)
	}
	for _, r := range body {
		if unicode.IsControl(r) {
			t.Fatalf("control character %U in %q", r, body)
		}
	}
}

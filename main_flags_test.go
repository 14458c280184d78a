package main

import (
	"slices"
	"testing"
)

// TestLongFlags: single-dash long flags, which Go's flag package took and
// scripts use, are taken as GNU's double-dash ones; values, shorthands,
// what follows "--" and the arguments of agent and bridge stay as they
// are; flags before a command's name go after it, where cobra finds them.
func TestLongFlags(t *testing.T) {
	root, _ := newRoot()
	for _, c := range []struct{ in, want []string }{
		{[]string{"-max-agents", "2"}, []string{"--max-agents", "2"}},
		{[]string{"-max-agents=2", "-allow-nested"}, []string{"--max-agents=2", "--allow-nested"}},
		{[]string{"-version"}, []string{"--version"}},
		{[]string{"-help"}, []string{"--help"}},
		{[]string{"serve", "-h"}, []string{"serve", "-h"}},
		{[]string{"serve", "-line-memory", "-1", "-grace", "2s"}, []string{"serve", "--line-memory", "-1", "--grace", "2s"}},
		{[]string{"--spawn", "-help", "-track-changes=false"}, []string{"--spawn", "-help", "--track-changes=false"}},
		{[]string{"-spawn", "--", "-x"}, []string{"--spawn", "--", "-x"}},
		{[]string{"-bogus"}, []string{"-bogus"}},
		{[]string{"ctl", "-socket", "s", "list"}, []string{"ctl", "list", "--socket", "s"}},
		{[]string{"ctl", "--tree", "list", "-dir=d"}, []string{"ctl", "list", "--tree", "--dir=d"}},
		{[]string{"ctl", "-interrupt", "send", "-timeout-ms", "x"}, []string{"ctl", "send", "--interrupt", "--timeout-ms", "x"}},
		{[]string{"ctl", "spawn", "agent", "-task-name", "-x"}, []string{"ctl", "spawn", "agent", "--task-name", "-x"}},
		{[]string{"ctl", "send", "-", "serve", "-queue", "--", "-queue"}, []string{"ctl", "send", "-", "serve", "--queue", "--", "-queue"}},
		{[]string{"-socket", "s", "ctl", "wait", "-", "-bogus"}, []string{"ctl", "--socket", "s", "wait", "-", "-bogus"}},
		{[]string{"-h", "serve"}, []string{"serve", "-h"}},
		{[]string{"agent", "-pace", "1s"}, []string{"agent", "-pace", "1s"}},
		{[]string{"mcp", "-tools", "multi-agent", "-host", "ssh://h/d"}, []string{"mcp", "--tools", "multi-agent", "--host", "ssh://h/d"}},
	} {
		if got := longFlags(root, c.in); !slices.Equal(got, c.want) {
			t.Errorf("longFlags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

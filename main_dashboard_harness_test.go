package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
)

// The tmux harness of the dashboard's end-to-end tests: a dashboard in a
// detached tmux session of its own server, keys in, screen out.

// dashWait bounds every wait for the screen.
const dashWait = 20 * time.Second

// dash is a dashboard running in a detached tmux session of its own tmux
// server. The pane runs `subdash …; echo SUBDASH-EXITED:$?` and then stays
// open, so the terminal state after exit can be inspected.
type dash struct {
	t                  *testing.T
	tmux, server       string
	dir, state, socket string
	w, h               int
	line               string // the pane's command line, for restart
}

// startDash starts the dashboard at w×h with args (plus --dir, --state-dir
// and --socket of a temporary workspace) and the extra environment env.
func startDash(t *testing.T, w, h int, env []string, args ...string) *dash {
	t.Helper()
	return startDashIn(t, w, h, nil, env, args...)
}

// startDashIn is startDash in a tmux whose options are set first (each a
// "set-option" argument list, e.g. {"-g", "window-style", "bg=white"}),
// before the dashboard starts and asks the terminal for its background.
func startDashIn(t *testing.T, w, h int, options [][]string, env []string, args ...string) *dash {
	t.Helper()
	base := t.TempDir()
	d := &dash{t: t, server: fmt.Sprintf("subdash-dash-%d-%d", os.Getpid(), time.Now().UnixNano()),
		dir: filepath.Join(base, "work"), state: filepath.Join(base, "state"), socket: filepath.Join(base, "s.sock"), w: w, h: h}
	if err := os.Mkdir(d.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d.run(options, env, append([]string{"--dir", d.dir, "--state-dir", d.state, "--socket", d.socket}, args...)...)
	return d
}

// run starts `subdash args…` in d's own tmux server at d.w×d.h, with the
// tmux options set first and the extra environment env (the variables that
// would change what the tests expect emptied), and ends it all when the
// test ends.
func (d *dash) run(options [][]string, env []string, args ...string) {
	t := d.t
	t.Helper()
	d.tmux = requireTool(t, "tmux")
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = dashQuote(a)
	}
	envs := []string{"TERM=xterm-256color", "SUBDASH_SOCKET=", "MEMO_SUBAGENT_MAX_AGENTS=", "SUBDASH_PRESET=", "MEMO_ENABLE_COLLAB_TOOLS="}
	envs = append(envs, env...)
	for i, e := range envs {
		envs[i] = dashQuote(e)
	}
	// The pane's shell runs without job control, so it shares the
	// dashboard's process group and gets the SIGINT of a ctrl+c typed into
	// the pager. dash (the /bin/sh of Debian, and tmux's shell when $SHELL
	// is unset or sh) would die of it and take the pane away; bash waits for
	// its child. The trap keeps the shell alive under both; a trapped
	// signal is reset to its default in children, so the dashboard and the
	// pager still get SIGINT as from any shell.
	line := fmt.Sprintf("trap : INT; env %s %s %s; echo SUBDASH-EXITED:$?; sleep 3600",
		strings.Join(envs, " "), dashQuote(binPath), strings.Join(quoted, " "))
	d.line = line
	first := line
	if len(options) > 0 {
		first = "sleep 3600"
	}
	if out, err := d.tm("new-session", "-d", "-s", "dash", "-x", strconv.Itoa(d.w), "-y", strconv.Itoa(d.h), first); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	if len(options) > 0 {
		for _, o := range options {
			if out, err := d.tm(append([]string{"set-option"}, o...)...); err != nil {
				t.Fatalf("tmux set-option %q: %v %s", o, err, out)
			}
		}
		if out, err := d.tm("respawn-pane", "-k", "-t", "dash", line); err != nil {
			t.Fatalf("tmux respawn-pane: %v %s", err, out)
		}
	}
	t.Cleanup(func() {
		if pid := d.dashPID(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_, _ = d.tm("kill-server")
		_ = os.Remove(filepath.Join(os.TempDir(), fmt.Sprintf("tmux-%d", os.Getuid()), d.server))
		d.killLeftovers()
	})
}

func (d *dash) tm(args ...string) (string, error) {
	out, err := exec.Command(d.tmux, append([]string{"-L", d.server, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out), err
}

// screen returns the pane's text.
func (d *dash) screen() string {
	out, err := d.tm("capture-pane", "-p", "-t", "dash")
	if err != nil {
		d.t.Fatalf("capture-pane: %v %s", err, out)
	}
	return out
}

// styledScreen returns the pane with its SGR attributes.
func (d *dash) styledScreen() string {
	out, err := d.tm("capture-pane", "-e", "-p", "-t", "dash")
	if err != nil {
		d.t.Fatalf("capture-pane: %v %s", err, out)
	}
	return out
}

// waitFor polls the screen until cond holds and returns it; it fails the
// test with the last screen after dashWait.
func (d *dash) waitFor(what string, cond func(screen string) bool) string {
	d.t.Helper()
	deadline := time.Now().Add(dashWait)
	for {
		s := d.screen()
		if cond(s) {
			return s
		}
		if strings.Contains(s, "SUBDASH-EXITED") && !strings.Contains(what, "exit") {
			d.t.Fatalf("the dashboard exited while waiting for %s:\n%s", what, s)
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// waitText waits until the screen shows every text.
func (d *dash) waitText(texts ...string) string {
	d.t.Helper()
	return d.waitFor(fmt.Sprintf("%q", texts), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// waitRow waits until the table row of agent id contains text.
func (d *dash) waitRow(id, text string) string {
	d.t.Helper()
	return d.waitFor(fmt.Sprintf("row of %s to show %q", id[:8], text), func(s string) bool {
		return strings.Contains(tableRow(s, id), text)
	})
}

// tableRow returns the screen line holding agent id's table row.
func tableRow(screen, id string) string {
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, id[:8]+" "); i >= 0 && i < 12 {
			return l
		}
	}
	return ""
}

// keys sends tmux key names ("j", "Enter", "Escape", "C-c", "PPage").
func (d *dash) keys(keys ...string) {
	d.t.Helper()
	if out, err := d.tm(append([]string{"send-keys", "-t", "dash"}, keys...)...); err != nil {
		d.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// typeText types s literally.
func (d *dash) typeText(s string) {
	d.t.Helper()
	if out, err := d.tm("send-keys", "-t", "dash", "-l", s); err != nil {
		d.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// resize resizes the tmux window.
func (d *dash) resize(w, h int) {
	d.t.Helper()
	if out, err := d.tm("resize-window", "-t", "dash", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)); err != nil {
		d.t.Fatalf("resize-window: %v %s", err, out)
	}
	d.w, d.h = w, h
}

// dashPID returns the dashboard process: the child of the pane's shell.
func (d *dash) dashPID() int {
	out, err := d.tm("display", "-p", "-t", "dash", "#{pane_pid}")
	if err != nil {
		return 0
	}
	sh := strings.TrimSpace(out)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%s/task/%s/children", sh, sh))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == binPath {
			return pid
		}
	}
	return 0
}

// journal returns the events of the dashboard's run.
func (d *dash) journal() []map[string]any {
	files, _ := filepath.Glob(filepath.Join(d.state, "runs", "*", "journal.jsonl"))
	var out []map[string]any
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				out = append(out, ev)
			}
		}
		fh.Close()
	}
	return out
}

// agentID waits for the agent spawned with message and returns its id.
func (d *dash) agentID(message string) string {
	d.t.Helper()
	deadline := time.Now().Add(dashWait)
	for time.Now().Before(deadline) {
		for _, ev := range d.journal() {
			if ev["event"] == "spawned" && ev["message"] == message {
				return ev["agent_id"].(string)
			}
		}
		time.Sleep(15 * time.Millisecond)
	}
	d.t.Fatalf("no agent spawned with %q", message)
	return ""
}

// agentIDs returns every agent id and process group of the run.
func (d *dash) groups() (ids []string, pgids []int) {
	for _, ev := range d.journal() {
		if ev["event"] == "submission_started" {
			ids = append(ids, ev["agent_id"].(string))
			if pid, ok := ev["pid"].(float64); ok {
				pgids = append(pgids, int(pid))
			}
		}
	}
	return ids, pgids
}

// leftovers returns the processes still running for one of the run's
// agents: any member of their process groups, and any process whose
// environment names one of the agents (a child that left its group).
func (d *dash) leftovers() []string {
	ids, pgids := d.groups()
	var left []string
	for _, g := range pgids {
		if errors.Is(syscall.Kill(-g, 0), syscall.ESRCH) {
			continue
		}
		if m := groupMembers(g); m != "" {
			left = append(left, fmt.Sprintf("process group %d: %s", g, m))
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if strings.Contains(string(b), "SUBDASH_AGENT_ID="+id+"\x00") {
				cmd, _ := os.ReadFile(strings.TrimSuffix(p, "environ") + "cmdline")
				left = append(left, fmt.Sprintf("%s (%s) of agent %s", filepath.Base(filepath.Dir(p)), strings.ReplaceAll(string(cmd), "\x00", " "), id[:8]))
			}
		}
	}
	return left
}

func (d *dash) killLeftovers() {
	_, pgids := d.groups()
	for _, g := range pgids {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}

// waitExit waits until the dashboard exited and returns its exit status.
func (d *dash) waitExit() int {
	d.t.Helper()
	s := d.waitFor("the dashboard to exit", func(s string) bool { return strings.Contains(s, "SUBDASH-EXITED:") })
	i := strings.Index(s, "SUBDASH-EXITED:")
	code, _ := strconv.Atoi(strings.Fields(s[i+len("SUBDASH-EXITED:"):])[0])
	return code
}

// checkRestored checks that the terminal was given back: out of the
// alternate screen, cursor visible, no agent process left.
func (d *dash) checkRestored() {
	d.t.Helper()
	out, err := d.tm("display", "-p", "-t", "dash", "#{alternate_on} #{cursor_flag}")
	if err != nil {
		d.t.Fatalf("display: %v %s", err, out)
	}
	if strings.TrimSpace(out) != "0 1" {
		d.t.Errorf("terminal not restored: alternate_on cursor_flag = %q, want \"0 1\"", strings.TrimSpace(out))
	}
	if left := d.leftovers(); len(left) > 0 {
		d.t.Errorf("processes left after the dashboard exited: %s", strings.Join(left, "; "))
	}
	if s := d.screen(); strings.Contains(s, "panic") {
		d.t.Errorf("the dashboard panicked:\n%s", s)
	}
}

// checkFrame checks that the panes' borders are where the layout puts
// them: nothing drawn by an agent moved or overwrote them.
func (d *dash) checkFrame(s string) {
	d.t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) < d.h {
		d.t.Fatalf("screen has %d lines, want %d:\n%s", len(lines), d.h, s)
	}
	mainH := d.h - 3
	tableW := 0
	if d.w >= 110 {
		tableW = min(max(d.w*9/20, 52), 76)
	}
	for i := 0; i < mainH; i++ {
		r := []rune(lines[i])
		if len(r) != d.w {
			d.t.Fatalf("line %d is %d cells, want %d:\n%s", i, len(r), d.w, s)
		}
		edges := []int{0, d.w - 1}
		if tableW > 0 {
			edges = append(edges, tableW-1, tableW)
		}
		for _, c := range edges {
			if !strings.ContainsRune("╭╮╰╯│", r[c]) {
				d.t.Fatalf("line %d column %d is %q, not a border:\n%s", i, c, r[c], s)
			}
		}
	}
}

// checkCellFrame checks that every line of s is exactly the pane's width
// counted as tmux counts (each code point's wcwidth; capture-pane prints a
// wide character once) and that the panes' right borders end their lines.
func (d *dash) checkCellFrame(s string) {
	d.t.Helper()
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines[:min(len(lines), d.h)] {
		if i < d.h-3 && !strings.HasSuffix(l, "╮") && !strings.HasSuffix(l, "│") && !strings.HasSuffix(l, "╯") {
			d.t.Fatalf("line %d does not end with a border: %q\n%s", i, l, s)
		}
		if w := c.StringWidth(l); w > d.w || i < d.h-3 && w != d.w {
			d.t.Fatalf("line %d is %d cells, want %d: %q\n%s", i, w, d.w, l, s)
		}
	}
}

// logRows returns the text inside the log pane (wide layout), one string
// per row.
func (d *dash) logRows(s string) []string {
	tableW := min(max(d.w*9/20, 52), 76)
	var rows []string
	for i, l := range strings.Split(s, "\n") {
		if i == 0 || i >= d.h-4 {
			continue
		}
		r := []rune(l)
		if len(r) == d.w {
			rows = append(rows, string(r[tableW+1:d.w-1]))
		}
	}
	return rows
}

func dashQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// groupMembers describes the live processes of process group g from
// /proc. Zombies are dead: they wait only for init to reap them (init in
// some containers reaps late), so they do not count.
func groupMembers(g int) string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(g) && f[0] != "Z" {
			out = append(out, s[:i+1]+" "+f[0]+" ppid "+f[1])
		}
	}
	return strings.Join(out, ", ")
}

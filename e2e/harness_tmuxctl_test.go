package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// tmuxCtl is one persistent tmux control client (`tmux -C attach`) of a
// dash's server: keys go in and screens come out through the same
// connection, so a benchmark that polls the screen every 2 ms pays no
// tmux process per poll (about 8.6 ms each on this machine, more than the
// dashboard's own answer) and measures the dashboard rather than the
// fork of tmux.
type tmuxCtl struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	mu  sync.Mutex
}

// control attaches a control client to d's session, told to send no pane
// output (no-output) and not to size the window (ignore-size); it is
// detached when the test ends.
func (d *dash) control() *tmuxCtl {
	d.t.Helper()
	cmd := exec.Command(d.tmux, "-L", d.server, "-f", "/dev/null", "-C", "attach-session", "-t", "dash")
	in, err := cmd.StdinPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	c := &tmuxCtl{t: d.t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}
	d.t.Cleanup(func() {
		_ = c.in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	// The client may not be attached yet when its first command arrives
	// ("no current client"): ask again until it is.
	testkit.Eventually(d.t, dashWait, "the tmux control client to attach", func() bool {
		_, err := c.try("refresh-client -f no-output,ignore-size")
		return err == nil
	})
	return c
}

// run sends one tmux command and returns what it printed; it fails the
// test when tmux answers with an error. Notifications (%…) between
// answers are skipped; only the blocks of this client's own commands
// (flags 1) are answers.
func (c *tmuxCtl) run(command string) string {
	c.t.Helper()
	out, err := c.try(command)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// try is run that returns tmux's error instead of failing the test.
func (c *tmuxCtl) try(command string) (string, error) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, command+"\n"); err != nil {
		c.t.Fatalf("tmux control client: %v", err)
	}
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.t.Fatalf("tmux control client ended before answering %q: %v", command, err)
		}
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "%begin" || f[3] != "1" {
			continue
		}
		var b strings.Builder
		for {
			l, err := c.out.ReadString('\n')
			if err != nil {
				c.t.Fatalf("tmux control client ended in the answer to %q: %v", command, err)
			}
			if strings.HasPrefix(l, "%end "+f[1]+" "+f[2]) {
				return b.String(), nil
			}
			if strings.HasPrefix(l, "%error "+f[1]+" "+f[2]) {
				return "", fmt.Errorf("tmux %q: %s", command, b.String())
			}
			b.WriteString(l)
		}
	}
}

// keys sends tmux key names, as dash.keys does.
func (c *tmuxCtl) keys(keys ...string) {
	c.t.Helper()
	c.run("send-keys -t dash " + strings.Join(keys, " "))
}

// screen returns the pane's text, as dash.screen does.
func (c *tmuxCtl) screen() string {
	c.t.Helper()
	return c.run("capture-pane -p -t dash")
}

// answer presses key and polls the screen every 2 ms until cond holds,
// returning how long that took; it fails the test after dashWait.
func (c *tmuxCtl) answer(key string, cond func(screen string) bool) time.Duration {
	c.t.Helper()
	start := time.Now()
	c.keys(key)
	for {
		s := c.screen()
		if cond(s) {
			return time.Since(start)
		}
		if time.Since(start) > dashWait {
			c.t.Fatalf("the answer to %s never showed:\n%s", key, s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// selectedID returns the first cell after the selection mark (›) of the
// table, the selected agent's short id (or its tree name), or "" when no
// row holds the mark. Not the whole row: a running agent's row changes at
// each tick of its spinner, so a key that moved nothing would be timed
// as answered at the next tick.
func selectedID(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "›"); i >= 0 && i < 8 {
			if f := strings.Fields(l[i+len("›"):]); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

// String names the client, for messages.
func (c *tmuxCtl) String() string { return fmt.Sprint(c.cmd.Args) }

package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// ctlAnswer is how long one command of a tmux control client may go
// unanswered. tmux answers in well under a millisecond; on a loaded
// machine a freshly attached client has been seen to never answer its
// first command, so a command without an answer in this time is taken as
// a stuck client.
const ctlAnswer = 10 * time.Second

// errNoAnswer is try's error for a command tmux did not answer within
// ctlAnswer.
var errNoAnswer = errors.New("no answer from the tmux control client")

// tmuxCtl is one persistent tmux control client (`tmux -C attach`) of a
// dash's server: keys go in and screens come out through the same
// connection, so a benchmark that polls the screen every 2 ms pays no
// tmux process per poll (which costs more than the dashboard's own
// answer) and measures the dashboard rather than the
// fork of tmux. A goroutine reads the client's lines into lines, so that
// no command waits on it longer than ctlAnswer.
type tmuxCtl struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	ended error         // why lines closed; read after it has
	quit  chan struct{} // closed by stop: the reader sends no more
	mu    sync.Mutex
}

// startControl starts a control client of d's session.
func (d *dash) startControl() *tmuxCtl {
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
	c := &tmuxCtl{t: d.t, cmd: cmd, in: in, lines: make(chan string, 256), quit: make(chan struct{})}
	go func() {
		r := bufio.NewReaderSize(out, 1<<16)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				c.ended = err
				close(c.lines)
				return
			}
			select {
			case c.lines <- line:
			case <-c.quit:
				return
			}
		}
	}()
	return c
}

// stop detaches the client: its stdin closed, it is given 5 s to end,
// then killed.
func (c *tmuxCtl) stop() {
	close(c.quit)
	_ = c.in.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// control attaches a control client to d's session, told to send no pane
// output (no-output) and not to size the window (ignore-size); it is
// detached when the test ends. A client not attached yet answers its
// first command with "no current client" and is asked again; one that
// does not answer at all within ctlAnswer is stopped and another started.
// The test fails when none is attached within dashWait.
func (d *dash) control() *tmuxCtl {
	d.t.Helper()
	c := d.startControl()
	d.t.Cleanup(func() { c.stop() }) // the last one started
	testkit.Poll(d.t, dashWait, "the tmux control client attached", func() (string, bool) {
		_, err := c.try("refresh-client -f no-output,ignore-size", ctlAnswer)
		if err == nil {
			return "", true
		}
		if errors.Is(err, errNoAnswer) {
			d.t.Logf("%v; starting another", err)
			c.stop()
			c = d.startControl()
		}
		return err.Error(), false
	})
	return c
}

// run sends one tmux command and returns what it printed; it fails the
// test when tmux answers with an error or not within ctlAnswer.
func (c *tmuxCtl) run(command string) string {
	c.t.Helper()
	out, err := c.try(command, ctlAnswer)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// try sends command and returns what tmux printed, tmux's error, or
// errNoAnswer when no answer came within within. Notifications (%…)
// between answers are skipped; only the blocks of this client's own
// commands (flags 1) are answers. It fails the test when the client
// ended.
func (c *tmuxCtl) try(command string, within time.Duration) (string, error) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, command+"\n"); err != nil {
		c.t.Fatalf("tmux control client: %v", err)
	}
	timer := time.NewTimer(within)
	defer timer.Stop()
	next := func() (string, error) {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("tmux control client ended before answering %q: %v", command, c.ended)
			}
			return l, nil
		case <-timer.C:
			return "", fmt.Errorf("%w to %q within %v", errNoAnswer, command, within)
		}
	}
	for {
		line, err := next()
		if err != nil {
			return "", err
		}
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "%begin" || f[3] != "1" {
			continue
		}
		var b strings.Builder
		for {
			l, err := next()
			if err != nil {
				return "", err
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
	return c.answerEvery(key, 2*time.Millisecond, cond)
}

// answerEvery is answer polling the screen every poll.
func (c *tmuxCtl) answerEvery(key string, poll time.Duration, cond func(screen string) bool) time.Duration {
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
		time.Sleep(poll)
	}
}

// selectedID returns the first cell after the selection mark (›) of the
// table, the selected agent's short id (or its tree name), or "" when no
// row holds the mark. Not the whole row: a running agent's row changes at
// each tick of its spinner, so a key that moved nothing would be timed
// as answered at the next tick.
func selectedID(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if _, after, ok := strings.Cut(l, "┏━ ▶ "); ok { // the tiles' (v) selected tile
			if f := strings.Fields(after); len(f) > 0 {
				return f[0]
			}
		}
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

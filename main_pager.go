package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/subdash/subdash/supervisor/runner/local"
)

// The pager key's $PAGER, for the host dashboard and viewers alike.

// pager runs $PAGER (default "less -R") on what the dashboard feeds it for its
// pager key, through /bin/sh so that PAGER may hold arguments. The pager
// reads the log from its stdin, as display lines (termtext.WriteLines): SGR
// kept unless NO_COLOR, every other escape sequence removed, so that no
// pager, not even PAGER=cat, hands an agent's title, mouse or alternate
// screen sequences to the terminal. Pagers read their keys from the
// terminal (/dev/tty) when stdin is a pipe. inPager holds it while it runs.
type pager struct {
	cmd     *exec.Cmd
	feed    func(context.Context, io.Writer) error
	inPager *pagerState
}

// pagerState is the pager running in front of the dashboard, if any.
type pagerState struct{ proc atomic.Pointer[os.Process] }

// active reports whether a pager runs.
func (s *pagerState) active() bool { return s.proc.Load() != nil }

// stop ends the running pager, if any: SIGTERM to the shell that runs
// $PAGER and to everything it started (the pager shares the dashboard's
// process group, the terminal's foreground one, so it cannot be signalled
// as a group of its own).
func (s *pagerState) stop() {
	p := s.proc.Load()
	if p == nil {
		return
	}
	for _, pid := range local.Descendants(p.Pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	_ = p.Signal(syscall.SIGTERM)
}

func newPager(feed func(context.Context, io.Writer) error, inPager *pagerState) *pager {
	cmd := exec.Command("/bin/sh", "-c", pagerCommand())
	if _, set := os.LookupEnv("LESS"); !set {
		// less shows SGR as colours only with -R; as git does, say so
		// when the user has no LESS of their own (PAGER=less).
		cmd.Env = append(os.Environ(), "LESS=R")
	}
	return &pager{cmd: cmd, feed: feed, inPager: inPager}
}

// pagerCommand returns the pager's command line: $PAGER, or "less -R".
func pagerCommand() string {
	if p := strings.TrimSpace(os.Getenv("PAGER")); p != "" {
		return p
	}
	return "less -R"
}

// Run runs the pager in front of the dashboard (tea.ExecCommand), feeding
// it the log until it ends or stops reading. The feed's context ends with
// the pager: a feed still waiting on its host (one that stopped answering)
// does not keep the dashboard from its keys once the pager quit.
func (p *pager) Run() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	p.cmd.Stdin = r
	if err := p.cmd.Start(); err != nil {
		r.Close() //nolint:errcheck // an unused pipe: the failed start is the error to report
		w.Close() //nolint:errcheck // as above
		return err
	}
	r.Close() //nolint:errcheck // our copy of the read end; the pager holds it now: when the pager ends, writes fail with EPIPE
	p.inPager.proc.Store(p.cmd.Process)
	defer p.inPager.proc.Store(nil)
	fed := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		err := p.feed(ctx, w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		fed <- err
	}()
	err = p.cmd.Wait()
	cancel()
	// EPIPE, or the feed's context cancelled: the pager quit before the
	// end, as q in less does.
	if ferr := <-fed; err == nil && ferr != nil && !errors.Is(ferr, syscall.EPIPE) && !errors.Is(ferr, context.Canceled) {
		err = fmt.Errorf("the log could not be read for it: %v", ferr)
	}
	return err
}

// SetStdin is part of tea.ExecCommand; the pager's stdin is the log.
func (p *pager) SetStdin(io.Reader) {}

// SetStdout connects the pager's output to the terminal.
func (p *pager) SetStdout(w io.Writer) { p.cmd.Stdout = w }

// SetStderr connects the pager's errors to the terminal.
func (p *pager) SetStderr(w io.Writer) { p.cmd.Stderr = w }

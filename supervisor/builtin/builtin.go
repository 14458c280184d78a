// Package builtin is the built-in audit agent that `subdash agent` runs when
// no agent CLI is installed (SPEC §2, step 4). It reads one task message from
// stdin, does real read-only work on the files under the path the task names
// (relative to its working directory, or absolute): finding
// TODO/FIXME/XXX/HACK markers, summarizing a tree by language. It streams
// the result line by line to stdout and exits.
//
// Every walk respects .gitignore files (those of the enclosing git repository
// above the named path, the path's own and nested ones), always skips .git,
// does not follow symbolic links, reads nothing but regular files, does not
// enter pseudo file systems such as /proc and /sys, and visits entries in
// name order so the output is deterministic.
package builtin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/transcript"
)

// Exit statuses returned by Run.
const (
	// StatusOK means the task ran to the end.
	StatusOK = 0
	// StatusError means the task was understood but failed: a missing or
	// unreadable path, a cancelled context, a failed write to stdout.
	StatusError = 1
	// StatusUsage means the task message or a flag was not understood.
	StatusUsage = 2
)

const (
	// defaultMaxFileSize is the size above which find skips a file, in bytes.
	defaultMaxFileSize = 4 << 20
	// maxTaskSize caps how much of stdin is read as the task message, in bytes.
	maxTaskSize = 1 << 20
)

// config is what one run needs besides its task; tests build it directly.
type config struct {
	dir         string        // absolute working directory
	fsys        fs.FS         // the file system rooted at "/"; dataFS for real
	pace        time.Duration // pause between output lines
	maxFileSize int64         // find skips larger files, in bytes
	input       string        // --input-format: "text" (the default) or transcript.BuiltinInputStreamJSON
	steer       *steering     // set by readSteered: messages taken while the task runs
	delegate    Delegate      // the host that split spawns children through; nil outside one
}

// Run executes one task: reads the whole task message from stdin (trimmed),
// works under dir, streams results to stdout, errors to stderr, and returns
// the process exit status (StatusOK, StatusError for a runtime error such as
// a missing path or a cancelled ctx, StatusUsage for a task that is not
// understood). args are the command-line arguments after "agent" (e.g.
// ["--pace", "50ms"]); bad flags print a message on stderr and give
// StatusUsage. An empty dir means the current directory.
//
// When ctx is cancelled (`subdash agent` cancels it on SIGTERM and SIGINT,
// with the signal as its cause), the task stops at its next check and Run
// prints "stopped: " and the cause on stderr and returns StatusError. If a
// blocked read keeps the task from stopping within stopGrace, Run prints
// the same line itself and returns StatusError without waiting any longer:
// the task is left behind, and nothing it writes afterwards reaches stdout
// or stderr.
//
// Run writes each output line with a single Write call and never buffers, so
// output reaches the supervisor as it is produced.
func Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, dir string, args []string) int {
	return RunDelegating(ctx, stdin, stdout, stderr, dir, args, nil)
}

// RunDelegating is Run for an agent of a host: d is the host that a task
// which delegates (split) spawns its children through, nil for none (that
// task then fails saying so).
func RunDelegating(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, dir string, args []string, d Delegate) int {
	cfg, status, ok := parseFlags(args, stderr)
	if !ok {
		return status
	}
	cfg.delegate = d
	abs, err := filepath.Abs(dir)
	if err != nil {
		warnf(stderr, "cannot resolve working directory %q: %v\n", dir, err)
		return StatusError
	}
	cfg.dir = abs
	return runStoppable(ctx, cfg, stdin, stdout, stderr)
}

// readAndRun reads the task message from stdin and runs it with cfg.
func readAndRun(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	if cfg.input == transcript.BuiltinInputStreamJSON {
		return readSteered(ctx, cfg, stdin, stdout, stderr)
	}
	msg, err := io.ReadAll(io.LimitReader(stdin, maxTaskSize))
	if err != nil {
		warnf(stderr, "cannot read the task from stdin: %v\n", err)
		return StatusError
	}
	return run(ctx, cfg, string(msg), stdout, stderr)
}

// parseFlags reads the command-line arguments into a config for the real
// file system. When ok is false the run ends with status: StatusOK after
// -h, StatusUsage after a bad flag, the message already on stderr.
func parseFlags(args []string, stderr io.Writer) (cfg config, status int, ok bool) {
	cfg = config{fsys: dataFS{}, maxFileSize: defaultMaxFileSize}
	flags := flag.NewFlagSet("subdash agent", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.DurationVar(&cfg.pace, "pace", 0, "pause between output lines, e.g. 50ms (for demos)")
	flags.StringVar(&cfg.input, "input-format", "text", "stdin: text (the task, read to its end) or stream-json (one JSON message a line, the task first; later ones are taken while it runs)")
	flags.Usage = func() {
		warnf(stderr, "usage: subdash agent [--pace DURATION] [--input-format text|stream-json] < task\n\nflags:\n")
		flags.PrintDefaults()
		warnf(stderr, "\n%s", tasksHelp)
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, StatusOK, false
		}
		return cfg, StatusUsage, false // flag has printed the error and the usage
	}
	if flags.NArg() > 0 {
		warnf(stderr, "subdash agent: unexpected argument %q; the task is read from stdin\n", flags.Arg(0))
		return cfg, StatusUsage, false
	}
	if cfg.input != "text" && cfg.input != transcript.BuiltinInputStreamJSON {
		fmt.Fprintf(stderr, "subdash agent: --input-format must be text or stream-json, got %q\n", cfg.input)
		return cfg, StatusUsage, false
	}
	if cfg.pace < 0 {
		warnf(stderr, "subdash agent: --pace must not be negative, got %v\n", cfg.pace)
		return cfg, StatusUsage, false
	}
	return cfg, StatusOK, true
}

// run parses and executes one task message with cfg.
func run(ctx context.Context, cfg config, msg string, stdout, stderr io.Writer) int {
	t, err := parseTask(msg)
	if err != nil {
		warnf(stderr, "%v\n\n%s", err, tasksHelp)
		return StatusUsage
	}

	out := &printer{ctx: ctx, w: stdout, pace: cfg.pace, steer: cfg.steer}
	switch t.kind {
	case taskFind:
		err = find(ctx, cfg, t, out, stderr)
	case taskSummarize:
		err = summarize(ctx, cfg, t, out, stderr)
	case taskSplit:
		err = split(ctx, cfg, t, out, stderr)
	}
	if err != nil {
		if ctx.Err() != nil {
			warnf(stderr, "stopped: %v\n", context.Cause(ctx))
		} else {
			warnf(stderr, "%v\n", err)
		}
		return StatusError
	}
	return StatusOK
}

// printer writes output lines, one Write per line, pausing pace between
// lines. The first error (a failed write or ctx cancelled during a pause)
// sticks and is returned by every later call.
type printer struct {
	ctx   context.Context
	w     io.Writer
	pace  time.Duration
	lines int
	err   error
	steer *steering // messages taken between files; nil without steering
}

// warnf writes a message to stderr, the agent's log. A failed write is
// dropped: the exit status already says whether the task succeeded, and a
// broken stderr leaves no other place to say it.
func warnf(stderr io.Writer, format string, a ...any) {
	fmt.Fprintf(stderr, format, a...) //nolint:errcheck // see above
}

// printf writes one line built from format and a; the newline is added.
// Its failure (a cancelled ctx while pacing, a failed write) is kept in
// p.err, as bufio.Writer keeps its own: printf then writes nothing more, and
// the task returns p.err.
func (p *printer) printf(format string, a ...any) {
	if p.err != nil {
		return
	}
	if p.lines > 0 && p.pace > 0 {
		timer := time.NewTimer(p.pace)
		select {
		case <-p.ctx.Done():
			timer.Stop()
			p.err = p.ctx.Err()
			return
		case <-timer.C:
		}
	}
	if _, err := io.WriteString(p.w, fmt.Sprintf(format, a...)+"\n"); err != nil {
		p.err = fmt.Errorf("cannot write output: %w", err)
		return
	}
	p.lines++
}

// displayPath is how a file at absolute path abs is named in the output:
// relative to dir when it lies under dir, absolute otherwise.
func displayPath(dir, abs string) string {
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return abs
	}
	return rel
}

// cause strips the operation and path from a *fs.PathError, which the
// caller names itself in friendlier terms.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

package main

import (
	"io"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The editor of edit-and-resend for a message over 64 KiB (SPEC §10), for
// the host dashboard and viewers alike: $VISUAL, else $EDITOR, else vi, run
// through /bin/sh so that it may hold arguments, on the file the dashboard
// streamed the message into.
type editor struct{ cmd *exec.Cmd }

func newEditor(path string) tea.ExecCommand {
	return &editor{cmd: exec.Command("/bin/sh", "-c", editorCommand()+` "$1"`, "subdash-editor", path)}
}

// editorCommand returns the editor's command line.
func editorCommand() string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := strings.TrimSpace(os.Getenv(v)); e != "" {
			return e
		}
	}
	return "vi"
}

// Run, SetStdin, SetStdout and SetStderr make editor a tea.ExecCommand: Bubble
// Tea hands the editor the terminal, runs it and takes the terminal back.
//
// Run runs the editor on the terminal and returns its exit error.
func (e *editor) Run() error { return e.cmd.Run() }

// SetStdin gives the editor Bubble Tea's input (the terminal).
func (e *editor) SetStdin(r io.Reader) { e.cmd.Stdin = r }

// SetStdout gives the editor Bubble Tea's output (the terminal).
func (e *editor) SetStdout(w io.Writer) { e.cmd.Stdout = w }

// SetStderr gives the editor the terminal for its errors.
func (e *editor) SetStderr(w io.Writer) { e.cmd.Stderr = w }

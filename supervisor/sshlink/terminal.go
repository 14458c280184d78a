package sshlink

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// foreground reports whether tty is a terminal whose foreground process
// group is this process's: only then may ssh take it to prompt (a
// subdash started in the background must not take the terminal from the
// shell).
func foreground(tty *os.File) bool {
	if tty == nil {
		return false
	}
	pg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pg == syscall.Getpgrp()
}

// takeTerminal makes this process's group the foreground of tty again,
// after ssh had it for its prompts (it runs in a group of its own, so a
// ctrl+c later, in the pager, does not end the link). A background group
// that sets the foreground gets SIGTTOU unless it ignores it: it is
// ignored for the call.
func takeTerminal(tty *os.File) {
	ignored := signal.Ignored(syscall.SIGTTOU)
	if !ignored {
		signal.Ignore(syscall.SIGTTOU)
		defer signal.Reset(syscall.SIGTTOU)
	}
	_ = unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, syscall.Getpgrp())
}

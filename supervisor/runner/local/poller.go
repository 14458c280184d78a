package local

// One poller for every waiting descriptor of the host's submissions: the
// read ends of quiet output pipes and the pidfds of main processes.

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// poller waits on many descriptors with one epoll(7) instance and one
// thread (the goroutine blocked in epoll_wait), so that a thousand quiet
// agents cost one thread instead of three each (a poll(2) per pipe and a
// wait4(2) per main process; BENCHMARKS.md "A thousand agents").
//
// Every descriptor is registered one-shot (EPOLLONESHOT): once it reported
// readiness it stays disabled until armed again, so a flooding child's
// writes do not wake the poller while its reader reads, pauses to gather
// or converts. That was the cost of Go's netpoller, which keeps a pipe
// armed (edge-triggered) and woke its thread on every write of the child
// (BENCHMARKS.md 1b).
//
// The poller's goroutine runs while a descriptor is registered and ends
// with the last one, so a host with nothing running holds no thread for it.
type poller struct {
	epfd    int
	wake    int // eventfd in the epoll set (token 0): tells loop to look whether it is still needed
	mu      sync.Mutex
	next    int32
	entries map[int32]*pollEntry
	running bool // loop runs
	// conn is epfd as Go's netpoller sees it: loop waits for the epoll
	// instance to have events there, holding no thread while it waits.
	conn syscall.RawConn
}

// pollEntry is one registered descriptor: fd, and fn, called on the
// poller's goroutine each time fd reports readiness after an arm. fn must
// not block (a send to a buffered channel, a close, a reap with WNOHANG);
// when it reports done, the entry is removed and, when owned, fd closed.
type pollEntry struct {
	fd    int
	token int32
	added bool // registered with the epoll instance
	owned bool // fd is closed once fn reported done
	fn    func() (done bool)
}

var (
	thePoller     *poller
	thePollerErr  error
	thePollerOnce sync.Once
)

// sharedPoller returns the host's poller, started on first use, or the
// error of epoll_create1.
func sharedPoller() (*poller, error) {
	thePollerOnce.Do(func() {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			thePollerErr = fmt.Errorf("epoll: %w", err)
			return
		}
		wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err == nil {
			err = unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: 0})
		}
		if err != nil {
			_ = unix.Close(fd) // the epoll fd was never used: nothing to lose
			if wake >= 0 {
				_ = unix.Close(wake)
			}
			thePollerErr = fmt.Errorf("epoll: %w", err)
			return
		}
		thePoller = &poller{epfd: fd, wake: wake, entries: map[int32]*pollEntry{}}
		if pollerMode == "netpoll" {
			if err := unix.SetNonblock(fd, true); err == nil {
				if c, err := os.NewFile(uintptr(fd), "epoll").SyscallConn(); err == nil {
					thePoller.conn = c
				}
			}
		}
	})
	return thePoller, thePollerErr
}

// register returns an entry for fd whose readiness calls fn; nothing is
// watched until arm. owned: fd is closed when fn reports done.
func (pl *poller) register(fd int, owned bool, fn func() (done bool)) *pollEntry {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for {
		pl.next++
		if pl.next <= 0 {
			pl.next = 1
		}
		if _, used := pl.entries[pl.next]; !used {
			break
		}
	}
	e := &pollEntry{fd: fd, token: pl.next, owned: owned, fn: fn}
	pl.entries[e.token] = e
	if !pl.running {
		pl.running = true
		go pl.loop()
	}
	return e
}

// arm asks for one report of e's descriptor being readable (or at its end,
// or failed); after it, e is disabled until armed again. The error is
// epoll_ctl's.
func (pl *poller) arm(e *pollEntry) error {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.armLocked(e)
}

func (pl *poller) armLocked(e *pollEntry) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: e.token}
	op := unix.EPOLL_CTL_MOD
	if !e.added {
		op = unix.EPOLL_CTL_ADD
	}
	if err := unix.EpollCtl(pl.epfd, op, e.fd, &ev); err != nil {
		return err
	}
	e.added = true
	return nil
}

// remove stops watching e's descriptor; call it before closing the
// descriptor. After it returns, e.fn is not called again.
func (pl *poller) remove(e *pollEntry) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.removeLocked(e)
}

func (pl *poller) removeLocked(e *pollEntry) {
	if e.added {
		_ = unix.EpollCtl(pl.epfd, unix.EPOLL_CTL_DEL, e.fd, nil)
		e.added = false
	}
	delete(pl.entries, e.token)
	if len(pl.entries) == 0 && pl.running {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1) // an eventfd adds the uint64 written, in host order
		_, _ = unix.Write(pl.wake, one[:])
	}
}

// loop reports readiness until no descriptor is registered: one thread,
// blocked in epoll_wait(2) while nothing is ready. fn runs with mu held,
// so remove waits for a call in progress.
func (pl *poller) loop() {
	events := make([]unix.EpollEvent, 128)
	if pl.conn != nil {
		_ = pl.conn.Read(func(uintptr) bool {
			for {
				n, err := unix.EpollWait(pl.epfd, events, 0)
				if err == unix.EINTR {
					continue
				}
				if n <= 0 {
					return false // wait in Go's netpoller
				}
				if !pl.dispatch(events[:n]) {
					return true
				}
			}
		})
		return
	}
	var prev time.Time
	for {
		n, err := unix.EpollWait(pl.epfd, events, -1)
		if err != nil {
			continue // EINTR
		}
		if !pl.dispatch(events[:n]) {
			return
		}
		if now := time.Now(); pollWindow > 0 {
			if now.Sub(prev) < pollWindow {
				time.Sleep(pollWindow)
			}
			prev = now
		}
	}
}

// pollWindow: SUBDASH_POLL_WINDOW, for the comparison.
var pollWindow = func() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("SUBDASH_POLL_WINDOW"))
	return d
}()

// dispatch calls the functions of the entries of events and reports
// whether loop goes on (an entry is registered).
func (pl *poller) dispatch(events []unix.EpollEvent) bool {
	{
		pl.mu.Lock()
		for _, ev := range events {
			if ev.Fd == 0 {
				var count [8]byte
				_, _ = unix.Read(pl.wake, count[:])
				continue
			}
			if e := pl.entries[ev.Fd]; e != nil && e.fn() {
				pl.removeLocked(e)
				if e.owned {
					_ = unix.Close(e.fd) // a pidfd only waited on: nothing to lose
				}
			}
		}
		if len(pl.entries) == 0 {
			pl.running = false
			pl.mu.Unlock()
			return false
		}
		pl.mu.Unlock()
	}
	return true
}

// pollerMode: "netpoll" waits for the epoll instance in Go's netpoller,
// "block" in epoll_wait(2) on a thread of its own; SUBDASH_POLLER
// overrides it for the comparison.
var pollerMode = func() string {
	if v := os.Getenv("SUBDASH_POLLER"); v != "" {
		return v
	}
	return "netpoll"
}()

// reapInPoller has the poller reap p's main process: its pidfd
// (pidfd_open(2)) becomes readable when the process exits, and the
// poller then reaps it with wait4(2) WNOHANG, records its status and
// closes exited, so no thread waits in wait4 per process. It reports
// false when the kernel has no pidfd (before Linux 5.3) or the poller
// refused it: the caller then waits for the process in a goroutine.
func (p *process) reapInPoller() bool {
	pid := p.cmd.Process.Pid
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	unix.CloseOnExec(fd)
	var e *pollEntry
	e = p.poller.register(fd, true, func() bool {
		var ws unix.WaitStatus
		for {
			wpid, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			switch {
			case err == unix.EINTR:
				continue
			case err == nil && wpid == 0: // not yet: wait for the next report
				if p.poller.armLocked(e) == nil {
					return false
				}
				// cannot wait in the poller: block here, once
				_, err = unix.Wait4(pid, &ws, 0, nil)
			}
			if err == nil {
				p.status, p.statusKnown = syscall.WaitStatus(ws), true
			}
			_ = p.cmd.Process.Release()
			close(p.exited)
			return true
		}
	})
	if p.poller.arm(e) != nil {
		p.poller.remove(e)
		_ = unix.Close(fd) // the pidfd was never waited on: nothing to lose
		return false
	}
	return true
}

// reapInNetpoller reaps p's main process from Go's netpoller: its pidfd
// (pidfd_open(2), non-blocking) is a file there, which becomes readable
// when the process exits; a goroutine waits for it, holding no thread,
// then reaps the process with wait4(2) WNOHANG, records its status and
// closes exited. It reports false when the kernel has no non-blocking
// pidfd (before Linux 5.10): the caller then waits for the process in a
// goroutine (cmd.Wait, a thread each).
func (p *process) reapInNetpoller() bool {
	pid := p.cmd.Process.Pid
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return false
	}
	go func() {
		defer f.Close() //nolint:errcheck // a pidfd only waited on: nothing to lose
		var ws unix.WaitStatus
		var werr error
		_ = rc.Read(func(uintptr) bool {
			for {
				wpid, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				if err == unix.EINTR {
					continue
				}
				werr = err
				return err != nil || wpid != 0 // not yet: wait in the netpoller
			}
		})
		if werr == nil {
			p.status, p.statusKnown = syscall.WaitStatus(ws), true
		}
		_ = p.cmd.Process.Release()
		close(p.exited)
	}()
	return true
}

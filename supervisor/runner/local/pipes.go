package local

// How a local process's output is read: its pipes (outputPipe), the
// readers (read) and the end of reading (Drain).

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/runner"
)

// maxDrain bounds the reading of output after the group is gone when a
// process outside the group keeps writing. A variable only so that a test
// can lower it.
var maxDrain = 10 * time.Second

// read feeds stream s to out until EOF: every read to out.log at once,
// and, in batches (maxBatch, displayDelay), to out.display, which has all
// of it before read returns. Once Drain has set a deadline
// (the group is gone), each deadline that passes asks what is left:
//   - output still in the pipe is read to the end, however slowly out
//     takes it (a loaded machine, the output budget);
//   - an empty pipe that nothing wrote to since the previous deadline is
//     held by a process that left the group without writing: given up on;
//   - more read since the group ended than the pipe holds means a process
//     outside the group writes on: cut off after maxDrain.
func (p *process) read(s runner.Stream, out streamSink) {
	defer p.readerDone()
	fd := p.outs[s]
	size := readBufSize // of the next read
	var small []byte    // a buffer of size bytes, or nil while the stream waits
	var buf []byte      // small, or in a flood a batch buffer of batches
	held := 0           // buf[:held] went to the log, not yet to the display lines
	var heldSince int64
	display := func() {
		if held > 0 && out.display != nil {
			out.display(s, buf[:held])
		}
		held = 0
	}
	// quiet gives a flood's batch buffer back, so that a stream that went
	// quiet holds no more than one read; with the shared poller, that read
	// buffer too, so that a waiting stream holds none.
	quiet := func() {
		display()
		if len(buf) == maxBatch {
			batches.put(buf)
		}
		if readerShape != shapeThread {
			if len(small) == readBufSize {
				readBufs.put(small)
			}
			small, size = nil, readBufSize
		}
		buf = small
	}
	defer quiet()
	progressed := false
	var started time.Time
	var last int64
	var drained int // bytes read since the first deadline passed
	for {
		if dl := p.deadlines[s].Load(); dl != 0 && time.Now().UnixNano() >= dl {
			if started.IsZero() {
				started = time.Now()
			}
			buffered, capacity := pipeFill(fd)
			switch {
			case buffered == 0 && !progressed:
				return
			case drained > capacity && time.Since(started) > maxDrain:
				return
			}
			progressed = false
			p.deadlines[s].Store(time.Now().Add(drainTimeout).UnixNano())
		}
		if held+size > len(buf) {
			display()
			if size >= maxReadBuf && len(buf) < maxBatch {
				if b := batches.get(); b != nil {
					buf = b
				}
			}
			if size > len(buf) {
				if size != len(small) {
					if len(small) == readBufSize {
						readBufs.put(small)
					}
					small = readBufs.get(size)
				}
				buf = small
			}
		}
		n, err := unix.Read(fd, buf[held:held+size])
		if n > 0 {
			now := time.Now().UnixNano()
			p.lastRead.Store(now)
			out.log(s, buf[held:held+n])
			if held == 0 {
				heldSince = now
			}
			held += n
			if out.display == nil {
				held = 0
			}
			progressed = true
			if !started.IsZero() {
				drained += n
			}
			switch {
			case n == size && size < maxReadBuf:
				size *= 2
			case n < size && now-last < int64(floodGap):
				time.Sleep(gather)
			}
			last = now
			if time.Now().UnixNano()-heldSince >= int64(displayDelay) {
				display()
			}
			continue
		}
		switch err {
		case nil: // EOF: every writer closed its end
			return
		case unix.EINTR:
		case unix.EAGAIN:
			display()
			if len(buf) < maxBatch || !p.awaitFlood(s) {
				quiet()
				p.awaitQuiet(s)
			}
		default:
			return
		}
	}
}

// streamSink is where a local process's readers put its output: log takes
// every read at once; display, when set, takes the same bytes later, in
// batches (runner.StartRequest's Log and Display); without it, log is Output.
type streamSink struct{ log, display func(runner.Stream, []byte) }

// batches holds the batch buffers (maxBatch bytes) of readers whose flood
// ended, for the next flood of any stream.
var batches batchPool

// maxSpareBatches bounds the batch buffers kept for reuse.
const maxSpareBatches = 8

// batchPool hands out batch buffers: anonymous mappings (mmap(2)) outside
// Go's heap, so that floods' buffers do not raise the collector's target
// (a heap is let grow to twice what it holds: buffers in the heap would
// nearly double a flooded dashboard's memory). A buffer given back has its pages returned to the
// kernel (MADV_DONTNEED) and is kept for reuse, up to maxSpareBatches.
type batchPool struct {
	mu   sync.Mutex
	free [][]byte
}

// get returns a buffer of maxBatch bytes, or nil when the kernel refuses
// the mapping (the reader then reads one read at a time).
func (bp *batchPool) get() []byte {
	bp.mu.Lock()
	if n := len(bp.free); n > 0 {
		b := bp.free[n-1]
		bp.free = bp.free[:n-1]
		bp.mu.Unlock()
		return b
	}
	bp.mu.Unlock()
	b, err := unix.Mmap(-1, 0, maxBatch, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	return b
}

// put takes back b from get; b must not be used after.
func (bp *batchPool) put(b []byte) {
	_ = unix.Madvise(b, unix.MADV_DONTNEED)
	bp.mu.Lock()
	if len(bp.free) < maxSpareBatches {
		bp.free = append(bp.free, b)
		b = nil
	}
	bp.mu.Unlock()
	if b != nil {
		_ = unix.Munmap(b)
	}
}

// readBufs holds the first-size read buffers (readBufSize) of streams
// that wait, for the next stream that has bytes: a thousand quiet agents
// hold none between their lines, where each stream held its own.
var readBufs readBufPool

// maxSpareReadBufs bounds the read buffers kept for reuse (64 KiB each).
const maxSpareReadBufs = 16

// readBufPool is a free list of read buffers of readBufSize bytes, in
// Go's heap (sync.Pool would drop them at every collection, and a quiet
// stream would then allocate 64 KiB per line).
type readBufPool struct {
	mu   sync.Mutex
	free [][]byte
}

// get returns a buffer of size bytes: a kept one when size is readBufSize.
func (rp *readBufPool) get(size int) []byte {
	if size == readBufSize {
		rp.mu.Lock()
		if n := len(rp.free); n > 0 {
			b := rp.free[n-1]
			rp.free[n-1] = nil
			rp.free = rp.free[:n-1]
			rp.mu.Unlock()
			return b
		}
		rp.mu.Unlock()
	}
	return make([]byte, size)
}

// put takes back b of readBufSize bytes from get; b must not be used after.
func (rp *readBufPool) put(b []byte) {
	rp.mu.Lock()
	if len(rp.free) < maxSpareReadBufs {
		rp.free = append(rp.free, b)
	}
	rp.mu.Unlock()
}

// awaitFlood waits, while the stream holds a flood's batch buffer, until
// its pipe has bytes, Drain acts, or batchIdle passes; it reports false
// when batchIdle passed (the flood is over). Hybrid: in poll(2) on this
// goroutine's thread, as a flood's reader never waits long (under a pids
// limit only floodPollCap at once); shared: in the poller.
func (p *process) awaitFlood(s runner.Stream) bool {
	switch readerShape {
	case shapeShared:
		return p.awaitShared(s, batchIdle)
	case shapeNetpoll:
		return p.awaitNetpoll(s, batchIdle)
	case shapeHybrid:
		ok, done := floodPoll()
		if !ok {
			return p.awaitShared(s, batchIdle) // under a pids limit (pids.go)
		}
		defer done()
		return p.awaitPoll(s, batchIdle, false)
	}
	return p.awaitPoll(s, batchIdle, true)
}

// awaitQuiet waits, with nothing held, until the stream's pipe has bytes
// or reached EOF or Drain acts: in the shared poller (one thread for every
// quiet stream), or with shapeThread in poll(2) on this goroutine's thread.
func (p *process) awaitQuiet(s runner.Stream) {
	switch readerShape {
	case shapeThread:
		p.awaitPoll(s, -1, true)
	case shapeNetpoll:
		p.awaitNetpoll(s, -1)
	default:
		p.awaitShared(s, -1)
	}
}

// awaitNetpoll is awaitPoll in Go's netpoller (shapeNetpoll): the wait of
// the pipe's file, with a read deadline for limit or stream s's deadline;
// Drain wakes it by a deadline in the past. It reports false when limit
// passed.
func (p *process) awaitNetpoll(s runner.Stream, limit time.Duration) bool {
	f := p.files[s]
	drained := p.deadlines[s].Load() != 0
	timeout, limit := p.timeout(s, limit)
	var dl time.Time
	if timeout >= 0 {
		dl = time.Now().Add(time.Duration(timeout) * time.Millisecond)
	}
	_ = f.SetReadDeadline(dl)
	if !drained && p.deadlines[s].Load() != 0 {
		return true // Drain came meanwhile: its wake may have been overwritten
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return p.awaitPoll(s, limit, false)
	}
	first := true
	err = rc.Read(func(fd uintptr) bool {
		if first { // what came before the wait began
			first = false
			n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return n > 0
		}
		return true
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return limit < 0
	}
	return true
}

// awaitPoll blocks until stream s's pipe has bytes or reached EOF, until
// Drain sets the deadlines (when wake: the eventfd), until stream s's
// deadline passes, or, when limit is not negative, until limit has
// passed, whichever comes first (poll(2) on this goroutine's thread; a
// signal may end it early, the caller only reads again). It reports false
// when limit passed. Without wake, Drain is seen at the latest after
// limit.
func (p *process) awaitPoll(s runner.Stream, limit time.Duration, wake bool) bool {
	fds := []unix.PollFd{{Fd: int32(p.outs[s]), Events: unix.POLLIN}, {Fd: int32(p.wake), Events: unix.POLLIN}}
	if !wake || p.wake < 0 {
		fds = fds[:1]
	}
	timeout, limit := p.timeout(s, limit)
	if p.deadlines[s].Load() != 0 {
		fds = fds[:1] // the eventfd stays readable once Drain wrote it
	}
	n, _ := unix.Poll(fds, timeout)
	return n != 0 || limit < 0
}

// timeout is the wait of stream s in milliseconds (-1: none): limit, or
// the time to its deadline once Drain set one, whichever is sooner; limit
// comes back -1 when the deadline is sooner.
func (p *process) timeout(s runner.Stream, limit time.Duration) (int, time.Duration) {
	timeout := -1
	if limit >= 0 {
		timeout = int(limit / time.Millisecond)
	}
	if dl := p.deadlines[s].Load(); dl != 0 {
		untilDeadline := max(0, int((time.Duration(dl-time.Now().UnixNano())+time.Millisecond-1)/time.Millisecond))
		if timeout < 0 || untilDeadline < timeout {
			timeout, limit = untilDeadline, -1
		}
	}
	return timeout, limit
}

// awaitShared is awaitPoll in the shared poller: stream s's pipe is armed
// once (EPOLLONESHOT), and this goroutine parks on a channel, holding no
// thread, until the poller reports it, Drain closes drainCh, or the
// timeout passes. It reports false when limit passed. A poller that
// cannot arm the pipe (it never fails for a pipe) leaves awaitPoll.
func (p *process) awaitShared(s runner.Stream, limit time.Duration) bool {
	if p.polls[s] == nil || p.poller.arm(p.polls[s]) != nil {
		return p.awaitPoll(s, limit, true)
	}
	timeout, limit := p.timeout(s, limit)
	drain := p.drainCh
	if p.deadlines[s].Load() != 0 {
		drain = nil // closed already: the deadline is the wait
	}
	var expired <-chan time.Time
	if timeout >= 0 {
		t := p.timers[s]
		if t == nil {
			t = time.NewTimer(time.Duration(timeout) * time.Millisecond)
			p.timers[s] = t
		} else {
			t.Reset(time.Duration(timeout) * time.Millisecond)
		}
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-p.ready[s]:
		return true
	case <-drain:
		return true
	case <-expired:
		return limit < 0
	}
}

// outputPipe returns a pipe for a child's stdout or stderr: the read end
// as a descriptor in non-blocking mode, read with read(2) and waited on
// with poll(2) (process.read), and the write end, blocking, for the
// child. The read end is never registered with Go's netpoller: the kernel
// wakes every epoll waiter of a polled pipe on each write, so a child
// writing 8 KiB at a time woke the netpoller's thread about 30,000 times
// per 256 MiB while the reader paused to gather (BENCHMARKS.md 1b: the
// supervising process's CPU for 256 MiB of base64 was 0.45–0.47 s with
// os.Pipe, 0.17–0.18 s this way). The cost is one thread per waiting
// stream, parked in poll(2). The pipe is pipeSize large when the kernel
// allows it (F_SETPIPE_SZ; refused above an unprivileged user's limit,
// which only costs speed).
func outputPipe() (r int, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return -1, nil, err
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0]) //nolint:errcheck // a pipe not used yet: SetNonblock's error is the one to report
		unix.Close(fds[1]) //nolint:errcheck // as above
		return -1, nil, err
	}
	_, _ = unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, pipeSize)
	return fds[0], os.NewFile(uintptr(fds[1]), "|1"), nil
}

// pipeFill returns how many bytes wait in the pipe of read end fd
// (FIONREAD) and how many it holds (F_GETPIPE_SZ). When it cannot tell,
// the pipe counts as empty and of pipeSize.
func pipeFill(fd int) (buffered, capacity int) {
	capacity = pipeSize
	if n, err := unix.IoctlGetInt(fd, unix.TIOCINQ); err == nil { // FIONREAD
		buffered = n
	}
	if n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0); err == nil {
		capacity = n
	}
	return buffered, capacity
}

// Drain waits for both readers to reach EOF, then closes every pipe. Call it
// only after the process group is gone: the pipes then reach EOF unless a
// process outside the group (setsid, a daemon) still holds them, which read
// detects with the deadlines set here.
func (p *process) Drain() {
	deadline := time.Now().Add(drainTimeout).UnixNano()
	for s := range p.deadlines {
		p.deadlines[s].CompareAndSwap(0, deadline)
	}
	p.drainOnce.Do(func() { close(p.drainCh) })
	for _, f := range p.files {
		if f != nil {
			_ = f.SetReadDeadline(time.Unix(1, 0)) // wakes a reader waiting in the netpoller
		}
	}
	if p.wake >= 0 {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1) // an eventfd adds the uint64 written, in host order
		_, _ = unix.Write(p.wake, one[:])
	}
	<-p.readersDone
	p.closePipes()
}

// closePipes closes the output pipes' read ends, the eventfd and stdin,
// once: Drain may be called more than once.
func (p *process) closePipes() {
	p.closeOnce.Do(func() {
		for _, e := range p.polls {
			if e != nil {
				p.poller.remove(e)
			}
		}
		for s, f := range p.files {
			if f != nil {
				f.Close()      //nolint:errcheck // a read end: its Close cannot lose data
				p.outs[s] = -1 // the file closed it
			}
		}
		for _, fd := range append(p.outs[:], p.wake) {
			if fd >= 0 {
				unix.Close(fd) //nolint:errcheck // read ends and the eventfd: their Close cannot lose data
			}
		}
		closeAll(p.stdin)
	})
}

package output

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/proto"
)

// Space is the free-space floor of the log files of one host (SPEC §5):
// when the filesystem of the state directory has less free than the
// smaller of 1 GiB and 5 % of its size, logging pauses (the agents keep
// running, their output keeps reaching the screen; the journal keeps
// writing), and it resumes once free space has grown by a tenth of the
// floor above the least it was while paused (and is a tenth above the
// floor): space freed, not a smaller write that happens to fit, so a flood
// does not pause and resume over and over as the disk fills.
// It looks (statfs(2)) only after every maxCredit bytes written, or when
// less than that was left above the floor at the last look, and at most
// every recheck while paused, so a flood pays one atomic add per write.
// All the host's outputs share one Space; a nil *Space lets every write
// through.
type Space struct {
	dir    string
	statfs func(dir string) (free, total uint64, err error)
	// changed is called, outside the lock, when logging pauses or resumes.
	changed func(paused bool, why string)

	credit atomic.Int64 // bytes that may be written before the next look
	mu     sync.Mutex
	paused bool
	last   time.Time // the last look while paused
	free   uint64    // at the last look
	floor  uint64
	low    uint64 // the least free seen while paused
}

const (
	// floorMax is the floor's size at most: 1 GiB.
	floorMax = 1 << 30
	// maxCredit is how much is written between two looks at most.
	maxCredit = 64 << 20
	// recheck is how often a paused Space looks again, at most.
	recheck = 250 * time.Millisecond
)

// NewSpace returns the floor of the filesystem holding dir. statfs reports
// its free bytes (for unprivileged users) and its size, nil meaning
// statfs(2); changed (may be nil) is told when logging pauses (paused, and
// why in words) or resumes.
func NewSpace(dir string, statfs func(dir string) (free, total uint64, err error), changed func(paused bool, why string)) *Space {
	if statfs == nil {
		statfs = Statfs
	}
	return &Space{dir: dir, statfs: statfs, changed: changed}
}

// Statfs returns the bytes free for unprivileged users and the size of the
// filesystem holding dir (statfs(2)).
func Statfs(dir string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// Floor returns the floor of a filesystem of total bytes: the smaller of
// 1 GiB and 5 % of it.
func Floor(total uint64) uint64 { return min(floorMax, total/20) }

// allow reports whether n more bytes may be written to a log file.
func (s *Space) allow(n int) bool {
	if s == nil {
		return true
	}
	if s.credit.Add(-int64(n)) >= 0 {
		return true
	}
	return s.look(n)
}

// look looks at the filesystem and decides: below the floor logging
// pauses, and resumes once a tenth of the floor more than the least free
// while paused is free (and a tenth above the floor).
func (s *Space) look(n int) bool {
	s.mu.Lock()
	if s.credit.Load() >= 0 { // another writer looked meanwhile
		s.mu.Unlock()
		return s.credit.Add(-int64(n)) >= 0 || s.look(n)
	}
	if s.paused && time.Since(s.last) < recheck {
		s.mu.Unlock()
		return false
	}
	free, total, err := s.statfs(s.dir)
	if err != nil {
		// not knowing is no reason to lose output: look again later
		s.credit.Store(maxCredit - int64(n))
		s.mu.Unlock()
		return true
	}
	s.free, s.floor, s.last = free, Floor(total), time.Now()
	need := s.floor
	if s.paused {
		s.low = min(s.low, free)
		need = max(s.floor, s.low) + s.floor/10
	}
	ok := free >= need+uint64(n)
	was := s.paused
	s.paused = !ok
	if s.paused && !was {
		s.low = free
	}
	if ok {
		s.credit.Store(int64(min(free-s.floor, maxCredit)) - int64(n))
	} else {
		s.credit.Store(-1 << 62)
	}
	why := s.whyLocked()
	s.mu.Unlock()
	if was != !ok && s.changed != nil {
		s.changed(!ok, why)
	}
	return ok
}

// Recheck makes the next write look at the filesystem, whatever was
// written or how recently it looked: space was freed, say.
func (s *Space) Recheck() {
	s.mu.Lock()
	s.last = time.Time{}
	s.credit.Store(-1)
	s.mu.Unlock()
}

// Paused reports whether logging is paused now.
func (s *Space) Paused() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// why says in words how full the filesystem was at the last look.
func (s *Space) why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.whyLocked()
}

func (s *Space) whyLocked() string {
	return fmt.Sprintf("the filesystem of %s has %s free: writing on would take it below its floor of %s (the smaller of 1 GiB and 5 %% of its size)",
		s.dir, proto.FormatBytes(int64(s.free)), proto.FormatBytes(int64(s.floor)))
}

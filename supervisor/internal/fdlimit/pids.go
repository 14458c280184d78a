package fdlimit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/subdash/subdash/supervisor/internal/cgroup"
)

// Pids is the tightest limit of processes and threads over the host: its
// pids cgroup (v1 or v2) or one of that cgroup's ancestors, the one with
// the fewest left. Every thread of the host (Go's own included), every
// agent and every process an agent starts count against it; root is
// bound by it as by no ulimit -u.
type Pids struct {
	Dir     string // the cgroup's folder, e.g. /sys/fs/cgroup/pids/x
	Max     int64  // its pids.max
	Current int64  // its pids.current when read
}

// Left is how many more processes or threads the cgroup allows now
// (pids.max - pids.current, never below 0).
func (p Pids) Left() int64 { return max(p.Max-p.Current, 0) }

// PidsLimit reads the host's pids cgroup and its ancestors now and
// returns the one with the fewest left; ok is false when none sets
// pids.max (all "max"), there is no pids controller, or /proc and
// /sys/fs/cgroup cannot be read.
func PidsLimit() (Pids, bool) {
	var best Pids
	found := false
	for _, dir := range pidsDirs() {
		mx, err1 := readInt(filepath.Join(dir, "pids.max"))
		cur, err2 := readInt(filepath.Join(dir, "pids.current"))
		if err1 != nil || err2 != nil {
			continue // "max", or a level without the files
		}
		p := Pids{Dir: dir, Max: mx, Current: cur}
		if !found || p.Left() < best.Left() {
			best, found = p, true
		}
	}
	return best, found
}

// PidsHint is what to add to the error of a spawn refused because the
// pids cgroup p has nothing left (fork's EAGAIN, or fewer than reserve
// left, kept for the host's own threads): the cgroup, its limit, how
// many are in use and what to do, in parentheses after a space.
func PidsHint(p Pids, reserve int64) string {
	kept := ""
	if reserve > 0 {
		kept = fmt.Sprintf(", %d kept for the host's own threads", reserve)
	}
	return fmt.Sprintf(" (no process could be made: the pids cgroup %s allows %d processes and threads (pids.max), %d in use%s; raise pids.max or lower --max-agents)",
		p.Dir, p.Max, p.Current, kept)
}

// pidsDirs returns the folders of the host's pids cgroup and its
// ancestors up to the hierarchy's mount, nearest first: from
// /proc/self/cgroup (the v1 line naming pids, else the v2 line "0::")
// and /proc/self/mountinfo (where that hierarchy is mounted). Read once:
// a host does not change cgroups.
var pidsDirs = sync.OnceValue(func() []string {
	v2, v1, ok := cgroup.Of(0)
	if !ok {
		return nil
	}
	var mounts []cgroup.Mount // the v1 pids mounts first, then the v2 ones
	for _, v2First := range []bool{false, true} {
		for _, m := range cgroup.Mounts() {
			if m.V2 == v2First && (m.V2 || containsWord(m.Options, "pids")) {
				mounts = append(mounts, m)
			}
		}
	}
	var dirs []string
	for _, m := range mounts {
		path := v2
		if !m.V2 {
			path = v1["pids"]
		}
		if path == "" {
			continue
		}
		top, ok := m.Dir(path)
		if !ok {
			continue // a cgroup outside what this mount shows
		}
		for dir := top; strings.HasPrefix(dir, m.Point); dir = filepath.Dir(dir) {
			dirs = append(dirs, dir)
			if dir == m.Point {
				break
			}
		}
		if !m.V2 {
			break // the v1 pids hierarchy is the one that counts
		}
	}
	return dirs
})

// containsWord reports whether the comma-separated list holds word.
func containsWord(list, word string) bool {
	for w := range strings.SplitSeq(list, ",") {
		if w == word {
			return true
		}
	}
	return false
}

// readInt reads a file holding one decimal number ("max" is an error).
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

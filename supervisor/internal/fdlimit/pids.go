package fdlimit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	v1, v2, ok := ownCgroups()
	if !ok {
		return nil
	}
	var dirs []string
	for _, m := range cgroupMounts() {
		path := v2
		if !m.v2 {
			path = v1
		}
		if path == "" {
			continue
		}
		rel, ok := strings.CutPrefix(path, m.root)
		if !ok {
			continue // a cgroup outside what this mount shows
		}
		for dir := filepath.Join(m.point, rel); strings.HasPrefix(dir, m.point); dir = filepath.Dir(dir) {
			dirs = append(dirs, dir)
			if dir == m.point {
				break
			}
		}
		if !m.v2 {
			break // the v1 pids hierarchy is the one that counts
		}
	}
	return dirs
})

// ownCgroups returns the host's cgroup in the v1 pids hierarchy and in
// the v2 one ("" when it has none there), from /proc/self/cgroup.
func ownCgroups() (v1, v2 string, ok bool) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", "", false
	}
	defer f.Close() //nolint:errcheck // read only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3) // id:controllers:path
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case containsWord(parts[1], "pids"):
			v1 = parts[2]
		}
	}
	return v1, v2, true
}

// cgroupMount is where a cgroup hierarchy is mounted: point, the cgroup
// its root shows (root), and whether it is v2.
type cgroupMount struct {
	point, root string
	v2          bool
}

// cgroupMounts returns the v1 pids mounts first, then the v2 ones, from
// /proc/self/mountinfo ("id parent dev root point opts … - type source
// superopts").
func cgroupMounts() []cgroupMount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close() //nolint:errcheck // read only
	var v1, v2 []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		m := cgroupMount{point: fields[4], root: fields[3]}
		switch {
		case tail[0] == "cgroup2":
			m.v2 = true
			v2 = append(v2, m)
		case tail[0] == "cgroup" && containsWord(tail[2], "pids"):
			v1 = append(v1, m)
		}
	}
	return append(v1, v2...)
}

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

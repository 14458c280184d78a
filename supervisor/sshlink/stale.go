package sshlink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tempPrefix begins the name of a link's folder of sockets in tempBase:
// "subdash-ssh-<pid of its process>-<random>". A process killed with
// SIGKILL cannot remove its folder (Close does otherwise); the next Dial
// on the machine removes those whose process is gone (removeStale).
const tempPrefix = "subdash-ssh-"

// tempPattern is the os.MkdirTemp pattern of this process's folders.
func tempPattern() string { return fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()) }

// removeStale removes the links' folders in base whose process is gone:
// named with a pid (older folders, without one, are left), owned by this
// user, and no process of that pid now (a pid used again keeps its folder
// until that process ends too). Their ssh got SIGTERM when the process
// died (Pdeathsig), so nothing uses their sockets. Errors are ignored: a
// folder left is what happened before.
func removeStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	removeStaleOf(base, entries)
}

// removeStaleOf is removeStale of entries, read from base: one gone
// since (another link removed it first) is passed over.
func removeStaleOf(base string, entries []os.DirEntry) {
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || processExists(pid) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone since ReadDir: another link's removeStale took it
		}
		if st, isStat := info.Sys().(*syscall.Stat_t); !isStat || int(st.Uid) != os.Getuid() {
			continue
		}
		_ = os.RemoveAll(filepath.Join(base, e.Name()))
	}
}

// processExists reports whether a process of pid exists (one of another
// user's counts).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

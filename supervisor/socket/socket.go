// Package socket names a host's control socket (SPEC §6): the one rule the
// dashboard, `subdash serve`, a viewer, `subdash ctl` and `subdash mcp`
// follow to find the same host.
package socket

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// Env is the environment variable that names a socket when no --socket
// flag does.
const Env = "SUBDASH_SOCKET"

// Default returns the control socket path of SPEC §6 for the absolute
// working directory dir:
// $XDG_RUNTIME_DIR/subdash/<first 12 hex of sha256(dir)>.sock, or the same
// name under /tmp/subdash-<uid>/ when runtimeDir is empty or relative:
// literally /tmp, never $TMPDIR, so that two programs started with
// different TMPDIR (an MCP client often sets its own) find the same host,
// as tmux does.
func Default(dir, runtimeDir string, uid int) string {
	sum := sha256.Sum256([]byte(dir))
	name := hex.EncodeToString(sum[:])[:12] + ".sock"
	if runtimeDir != "" && filepath.IsAbs(runtimeDir) {
		return filepath.Join(runtimeDir, "subdash", name)
	}
	return filepath.Join("/tmp", fmt.Sprintf("subdash-%d", uid), name)
}

// Resolve applies SPEC §6's order: flag (--socket), else $SUBDASH_SOCKET
// (read with getenv), else Default of the absolute directory dir with
// $XDG_RUNTIME_DIR. named reports that the socket came from the flag or
// the environment rather than from dir, so that messages name the socket
// and not the folder. Surrounding blanks of the flag and the variable are
// ignored.
func Resolve(flag, dir string, getenv func(string) string, uid int) (path string, named bool) {
	if s := strings.TrimSpace(flag); s != "" {
		return s, true
	}
	if s := strings.TrimSpace(getenv(Env)); s != "" {
		return s, true
	}
	return Default(dir, getenv("XDG_RUNTIME_DIR"), uid), false
}

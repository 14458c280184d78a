package testkit

import (
	"fmt"
	"os"
)

// EmptyConfigHome points XDG_CONFIG_HOME at a new empty folder for the
// rest of the process and the processes it starts (the subdash binaries of
// end-to-end tests, tmux servers and their panes), so that a developer's
// own config file (~/.config/subdash/config.toml) never changes what a
// test or a benchmark gets. Call it from TestMain before m.Run; cleanup
// removes the folder.
func EmptyConfigHome() (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "subdash-config-home-")
	if err != nil {
		return nil, fmt.Errorf("an empty XDG_CONFIG_HOME: %w", err)
	}
	// searchable by every user: tests run subdash as another user too
	// (nobody), who must find no file there, not a folder it may not read
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // an empty folder; others must see into it
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("an empty XDG_CONFIG_HOME: %w", err)
	}
	if err := os.Setenv("XDG_CONFIG_HOME", dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("an empty XDG_CONFIG_HOME: %w", err)
	}
	return func() { _ = os.RemoveAll(dir) }, nil
}

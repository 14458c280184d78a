package ui

import (
	"fmt"
	"os"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
)

// TestMain runs the tests and benchmarks with an empty XDG_CONFIG_HOME:
// the ui takes its keys and theme from Options, never from the config
// file, and so a developer's own file must not reach what the tests run
// (the program tests start real terminals' worth of environment).
func TestMain(m *testing.M) {
	cleanup, err := testkit.EmptyConfigHome()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ui:", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

package testkit

import (
	"os"
	"testing"
)

// Missing ends a test that cannot run here because a tool or a file it
// needs is not installed; how says what is missing and how to install it.
// The test is skipped with that reason, unless SUBDASH_REQUIRE_TOOLS=1
// (.ci/run, which installs every such tool), where it fails instead: a
// judge that skips in CI would let a regression land.
func Missing(t testing.TB, how string) {
	t.Helper()
	if os.Getenv("SUBDASH_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s; SUBDASH_REQUIRE_TOOLS=1 requires it", how)
	}
	t.Skip(how)
}

package wire

import (
	"runtime/debug"
	"testing"
)

// A plain build says devel, with its commit when Go stamped one; a tagged
// or pseudo-versioned build says that; none says "(devel)", which the
// messages about versions wrapped in parentheses again.
func TestVersionOfABuild(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("1a2b3c4d5e6f7a8b9c0d", "false")}, true, "devel 1a2b3c4d5e6f"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("1a2b3c4d5e6f7a8b9c0d", "true")}, true, "devel 1a2b3c4d5e6f+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, true, "v1.2.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202181000-1a2b3c4d5e6f+dirty"}}, true, "v0.0.0-20261202181000-1a2b3c4d5e6f+dirty"},
	} {
		if got := versionOf(c.bi, c.ok); got != c.want {
			t.Errorf("versionOf(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

package wire

import (
	"runtime/debug"
	"time"
)

// Protocol is the version of the control socket protocol this build
// speaks (SPEC §6): 2. Its routes are under /v1 (the path names no
// version); GET /v1/info says it (proto.Info.Protocol), as does the
// ProtocolHeader of every answer, and a client that meets another says
// which side to upgrade. Within a version changes are additive, behind
// feature words (proto.HostFeatures): new routes, fields and events; a
// reader ignores what it does not know.
const Protocol = 2

// ProtocolHeader is the header in which every answer of a host names its
// Protocol ("2"); protocol 1, the last without it, sent none.
const ProtocolHeader = "Subdash-Protocol"

// OriginHeader names the kind of client in a request ("ctl", "mcp",
// "viewer"); a spawned agent keeps it (proto.AgentInfo.Origin).
const OriginHeader = "X-Subdash-Client"

// SessionHeader names the `subdash mcp --tools multi-agent` session that
// makes a request (proto.Caller.Session): the host keeps a root mailbox per
// session (SPEC §14).
const SessionHeader = "X-Subdash-Session"

// HeartbeatInterval is how often the host writes a comment on an idle
// event stream (and a blank line on a long search), so that a client
// tells a quiet host from a stopped one within its deadline.
const HeartbeatInterval = 3 * time.Second

// Version is this binary's module version (a tag, or Go's pseudo-version
// of the commit it was built from), else "devel" with the commit's first
// 12 hex digits and "+dirty" when the tree had changes ("devel 1a2b3c4d5e6f"),
// else "devel" (a build without VCS stamping, -buildvcs=false): what
// `subdash --version`, the bridge, the MCP server and the messages about
// versions say; never Go's "(devel)", which those messages would put in
// parentheses again.
func Version() string { return versionOf(debug.ReadBuildInfo()) }

// versionOf is Version of the build information bi (ok false: none).
func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	v := "devel " + rev[:min(12, len(rev))]
	if dirty {
		v += "+dirty"
	}
	return v
}

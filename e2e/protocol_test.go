package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/internal/testkit/controlkit"
)

// The words that say which side to upgrade (SPEC §6), after "the subdash
// serving <socket> speaks control protocol N".
const (
	olderHost = "older than this subdash's 2: upgrade the host (quit it and start it again with this subdash), or use the subdash that started it"
	newerHost = "newer than this subdash's 2: upgrade this subdash to the host's version, or use the subdash that started the host"
)

// TestAnotherProtocolSaysWhichSideToUpgrade: every front-end that meets a
// host of another control protocol, one of protocol 1 (its answers name
// none) or of 3, refuses it and says which side to upgrade, where its
// user reads it: ctl on stderr with exit status 1, a viewer (attach, or
// the dashboard where a host serves) on the terminal before any screen,
// with exit status 1, and `subdash mcp` on its stderr, the MCP client's
// log, before its initialize answers.
func TestAnotherProtocolSaysWhichSideToUpgrade(t *testing.T) {
	for _, c := range []struct {
		host int
		want string
	}{{1, "speaks control protocol 1, " + olderHost}, {3, "speaks control protocol 3, " + newerHost}} {
		sock, _ := controlkit.ProtocolHost(t, c.host)
		says := func(what string, code int, out string, want ...string) {
			t.Helper()
			for _, w := range append(want, c.want, sock) {
				if !strings.Contains(out, w) {
					t.Errorf("%s, a host of protocol %d: exit %d, %q; want it to say %q", what, c.host, code, out, w)
					return
				}
			}
			if code != 1 {
				t.Errorf("%s, a host of protocol %d: exit %d, want 1", what, c.host, code)
			}
		}
		r := runCtl(t, nil, "", "list", "--socket", sock)
		says("ctl list", r.code, r.stderr, "list_agents failed: ")
		r = runCtl(t, nil, "", "spawn", "review the parser", "--socket", sock)
		says("ctl spawn", r.code, r.stderr, "spawn_agent failed: ")
		// A viewer fails while attaching, before it needs a terminal.
		code, stderr := start(t, nil, "attach", "--socket", sock).wait(t)
		says("attach", code, stderr, "subdash: ")
		code, stderr = start(t, nil, "--socket", sock, "--dir", t.TempDir()).wait(t)
		says("the dashboard", code, stderr, "subdash: ")

		cmd := exec.Command(binPath, "mcp", "--socket", sock, "--dir", t.TempDir())
		cmd.Env = testEnv()
		mcpErr := &testkit.SyncBuffer{}
		cmd.Stderr = mcpErr
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "subdash-e2e"}, nil).Connect(context.Background(),
			&mcpsdk.CommandTransport{Command: cmd}, nil)
		if err == nil {
			cs.Close() //nolint:errcheck // a session that should not exist: the test fails on it
			t.Errorf("mcp initialize with a host of protocol %d succeeded", c.host)
		}
		_ = cmd.Wait()
		says("mcp", cmd.ProcessState.ExitCode(), mcpErr.String(), "subdash: ")
	}
}

// TestMCPToolCallOnAHostReplacedByANewerOne: `subdash mcp` drives a host
// of its protocol, which another of protocol 3 then replaces on the same
// socket: the next tool call fails, and its result says to upgrade this
// subdash (the caller is a model: it reads only the result).
func TestMCPToolCallOnAHostReplacedByANewerOne(t *testing.T) {
	sock, set := controlkit.ProtocolHost(t, 2)
	cs, _, _ := startMCP(t, nil, "--socket", sock, "--dir", t.TempDir())
	if text, isErr := callTool(t, cs, "list_agents", map[string]any{}); isErr {
		t.Fatalf("list_agents on a host of protocol 2: %s", text)
	}
	set(3)
	text, isErr := callTool(t, cs, "list_agents", map[string]any{})
	if want := "speaks control protocol 3, " + newerHost; !isErr || !strings.Contains(text, want) || !strings.Contains(text, sock) {
		t.Errorf("list_agents on a host of protocol 3: error %v, %q; want it to say %q", isErr, text, want)
	}
}

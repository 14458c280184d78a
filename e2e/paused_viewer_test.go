package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// pausedCommand floods for a message "flood…" (yes, as fast as the pipe
// takes it) and otherwise answers and stays running.
const pausedCommand = `read m; case "$m" in flood*) exec yes "spam $SUBDASH_AGENT_ID spam spam spam spam spam spam";; esac; echo "got: $m"; exec sleep 60`

// viewerPause is how long the paused viewer tests stop a viewer: longer
// than a client's deadline and the probe after it, so that a viewer that
// counted the pause against the host would say it does not answer.
const viewerPause = client.CallTimeout + client.ProbeTimeout

// TestPausedViewerCarriesOn stops a viewer (SIGSTOP, as ctrl+z, a debugger
// or a frozen ssh session do) for longer than its deadline, with an idle
// host and with four agents flooding, while an agent is spawned; continued
// (SIGCONT), the viewer shows that agent, says nothing of a host that does
// not answer, still follows the host, and q detaches with exit 0: a
// pause is not the host's silence. How long the catch-up took is logged
// (BENCHMARKS.md has the figures).
func TestPausedViewerCarriesOn(t *testing.T) {
	raceChecked(t)
	for _, floods := range []int{0, 4} {
		t.Run(fmt.Sprintf("%d flooding", floods), func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			serveWith(t, w, nil, "--command", pausedCommand, "--max-agents", "8", "--grace", "200ms")
			for i := range floods {
				ctlOK(t, w, nil, "spawn", fmt.Sprintf("flood %d", i))
			}
			d := startViewer(t, w, "attach", "--socket", w.socket)
			d.waitText("attached to subdash serve")
			if floods > 0 {
				d.waitText("spam ")
			}
			pid := d.dashPID()
			testkit.StopProcess(t, pid, dashWait)
			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "spawned while the viewer was stopped")
			time.Sleep(viewerPause) // the pause itself: what the test is about, not a wait for a result
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			resumed := time.Now()
			d.waitRow(sp.AgentID, "running") // fails the test if the viewer exits
			t.Logf("%d flooding agents, viewer stopped %s: the agent spawned meanwhile showed %s after SIGCONT", floods, viewerPause, time.Since(resumed).Round(time.Millisecond))
			if s := d.screen(); strings.Contains(s, "SUBDASH-EXITED") || strings.Contains(s, "did not answer") {
				t.Fatalf("the viewer, continued after %s:\n%s", viewerPause, s)
			}
			// It still follows the host.
			ctlOK(t, w, &sp, "spawn", "spawned after the pause")
			d.waitRow(sp.AgentID, "running")
			d.keys("q")
			if code := d.waitExit(); code != 0 {
				t.Errorf("q after the pause: exit %d", code)
			}
		})
	}
}

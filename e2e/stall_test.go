package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// sleeperAgent prints one line, waits silently for a line on the FIFO
// named by its message, prints it, then sleeps 600 s: no output, no CPU
// time, twice.
const sleeperAgent = `read m; echo started; read l < "$m"; echo "woke $l"; exec sleep 600`

// TestStalledAgent (SPEC §11 "Stalled"): with --stall-after 3s a silent
// agent is marked stalled in the dashboard (the row's mark, the status
// line's count), in ctl list (stalled_since, needs_you reason stalled)
// and for the notify command (SUBDASH_STATUS=stalled); its output clears
// the mark; silent again, it is stalled again.
func TestStalledAgent(t *testing.T) {
	base := t.TempDir()
	fifo := filepath.Join(base, "wake")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	notified := filepath.Join(base, "notified")
	d := startDash(t, 160, 30, nil, "--command", sleeperAgent, "--stall-after", "3s",
		"--notify-command", `echo "$SUBDASH_STATUS" >> `+shellQuote(notified), "--spawn", fifo)
	id := d.agentID(fifo)
	w := workspace{dir: d.dir, state: d.state, socket: d.socket}
	d.waitRow(id, "⊘ stalled")
	d.waitText("⊘ 1 stalled")
	waitAgent(t, w, id, "stalled in list", func(a proto.Summary) bool {
		return a.StalledSince != nil && a.Status == proto.StatusRunning
	})
	waitCount(t, "notify command runs with SUBDASH_STATUS=stalled", 1, func() int {
		b, _ := os.ReadFile(notified)
		return strings.Count(string(b), "stalled\n")
	})

	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("up\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	d.waitFor("the output cleared the mark", func(s string) bool {
		return strings.Contains(s, "woke up") && !strings.Contains(s, "stalled")
	})
	waitAgent(t, w, id, "not stalled in list", func(a proto.Summary) bool { return a.StalledSince == nil })
	d.waitRow(id, "⊘ stalled") // sleep 600: silent again
}

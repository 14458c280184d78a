package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/subdash/subdash/internal/testkit"
)

// The killer is the shell script a pod runs to end a submission; it needs
// /bin/sh and /proc only, so it runs here on this machine's processes as
// in a pod. Below 0 tenths (Process.Kill) it sends SIGKILL at once: a
// process that answers SIGTERM (an agent CLI that would then send its
// killed tool's result to the model) never runs its handler. With a grace
// period it sends SIGTERM first, and the handler runs.
func TestKillerSkipsSIGTERMBelowZeroTenths(t *testing.T) {
	for _, c := range []struct {
		tenths  string
		trapped bool
	}{{"-1", false}, {"10", true}} {
		t.Run(c.tenths, func(t *testing.T) {
			id := uuid.NewString()
			mark := filepath.Join(t.TempDir(), "term")
			// the trap runs once the short sleep returns, within 20 ms
			cmd := exec.Command("/bin/sh", "-c", `trap 'echo term > "$1"; exit 0' TERM; echo ready; while :; do sleep 0.02; done`, "agent", mark)
			cmd.Env = append(os.Environ(), "SUBDASH_SUBMISSION_ID="+id)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			if _, err := out.Read(make([]byte, 6)); err != nil { // "ready": the trap is set
				t.Fatal(err)
			}
			b, err := exec.Command("/bin/sh", "-c", killer, "subdash-terminate", id, c.tenths).CombinedOutput()
			if err != nil || len(b) > 0 {
				t.Fatalf("killer: %v %q", err, b)
			}
			werr := cmd.Wait()
			_, statErr := os.Stat(mark)
			if trapped := statErr == nil; trapped != c.trapped {
				t.Errorf("the SIGTERM handler ran: %v, want %v (exit: %v)", trapped, c.trapped, werr)
			}
			testkit.Eventually(t, 5*time.Second, "no process of the submission is left", func() bool {
				return syscall.Kill(-cmd.Process.Pid, 0) != nil
			})
		})
	}
}

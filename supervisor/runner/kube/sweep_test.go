package kube

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// TestHostKilledIsNotAliveWhileAZombie: a host killed with SIGKILL whose
// parent has not reaped it yet is gone, so the next host deletes its pods
// (SPEC §13); a live process is alive.
func TestHostKilledIsNotAliveWhileAZombie(t *testing.T) {
	if !hostAlive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() //nolint:errcheck // reaps the zombie; killed on purpose
	testkit.Eventually(t, 10*time.Second, "the killed process to be a zombie", func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return bytes.Contains(b, []byte(") Z"))
	})
	if hostAlive(pid) {
		t.Fatalf("process %d, killed and not reaped (a zombie), is taken for a live host", pid)
	}
}

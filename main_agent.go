package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/builtin"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/socket"
)

// agent runs `subdash agent`, the built-in audit agent, on its task read
// from stdin. SIGINT or SIGTERM stops it (the host's interrupt and
// grace period), and it then exits 128+n. Its split task spawns children
// through the host of $SUBDASH_SOCKET (SPEC §2: set for the agents of a
// host run with --allow-nested).
func agent(args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var ended atomic.Int32
	go func() {
		sig := (<-sigs).(syscall.Signal)
		ended.Store(int32(sig))
		cancel(fmt.Errorf("%s received", unix.SignalName(sig)))
	}()
	dir, _ := os.Getwd()
	if v := os.Getenv("SUBDASH_AGENT_INPUT"); v != "" {
		// the host steers it (SPEC §11): stdin carries stream-json
		args = append([]string{"--input-format", v}, args...)
	}
	var host builtin.Delegate // a host lets its agents spawn children (split) through SUBDASH_SOCKET
	if sock := os.Getenv(socket.Env); sock != "" {
		host = client.NewClient(sock, "")
	} else if r := os.Getenv(runner.EnvRunner); r != "" && r != runner.Local {
		host = builtin.NoHostOn(r) // a pod: the host's socket is out of reach (SPEC §13)
	}
	code := builtin.RunDelegating(ctx, os.Stdin, os.Stdout, os.Stderr, dir, args, host)
	if n := ended.Load(); n != 0 {
		return 128 + int(n)
	}
	return code
}

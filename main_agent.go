package main

import (
	"os"

	"github.com/subdash/subdash/internal/signals"
	"github.com/subdash/subdash/supervisor/builtin"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/socket"
)

// agent runs `subdash agent`, the built-in audit agent, on its task read
// from stdin. SIGINT, SIGTERM or SIGHUP stops it (the host's interrupt
// and grace period, or a terminal that hung up), and it then exits 128+n
// (package signals). Its split task spawns children through the host of
// $SUBDASH_SOCKET (SPEC §2: set for the agents of a host run with
// --allow-nested).
func agent(args []string) int {
	sig := signals.Take(nil)
	defer sig.Release()
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
	return sig.Status(builtin.RunDelegating(sig.Context(), os.Stdin, os.Stdout, os.Stderr, dir, args, host))
}

package kube

import (
	"testing"
	"time"
)

// A submission in a pod is told that it runs on the Kubernetes runner
// (SPEC §2: SUBDASH_RUNNER), and gets no control socket to reach, so the
// built-in agent's split says its host is out of reach from there.
func TestPodIsToldItsRunner(t *testing.T) {
	image, node := testCluster(t)
	s := newHost(t, evalCommand, image, node, time.Second)
	sp, err := s.Spawn(t.Context(), `echo "[$SUBDASH_RUNNER] [$SUBDASH_SOCKET]"`)
	if err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, sp.AgentID); str(d.LastOutput) != "[kubernetes] []" {
		t.Fatalf("%s: %q (%s)", d.Status, str(d.LastOutput), str(d.LastError))
	}
}

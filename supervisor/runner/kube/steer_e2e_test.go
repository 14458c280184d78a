package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// Steering holds in a pod (SPEC §11, §13): stdin is the exec stream, kept
// open; the steered line reaches the agent, its receipt comes back, and
// stdin closes at the agent's done.
func TestSteerOnKubernetes(t *testing.T) {
	image, node := testCluster(t)
	cfg := hostConfig(t.TempDir(), testkit.SteerAgent, image, node, 2*time.Second)
	cfg.CommandSource = supervisor.SourceBuiltin // a steerable agent
	s, err := supervisor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	res, err := s.Spawn(t.Context(), "audit .")
	if err != nil {
		t.Fatal(err)
	}
	id := res.AgentID
	waitLogs(t, s, id, "working", 2*time.Minute)
	r, err := s.Steer(t.Context(), id, "also audit tests")
	if err != nil || r.Receipt != proto.ReceiptPending {
		t.Fatalf("steer: %+v %v", r, err)
	}
	d := waitFinal(t, s, id)
	got, _ := s.Logs(id, 0)
	if d.Status != proto.StatusCompleted || !strings.Contains(got, "stdin-closed") {
		t.Fatalf("%s %q; log %q", d.Status, str(d.LastError), got)
	}
	l, _ := s.List(t.Context())
	for _, a := range l.Agents {
		if a.AgentID == id && (len(a.SteeredMessages) != 1 || a.SteeredMessages[0].Receipt != proto.ReceiptFolded) {
			t.Fatalf("steered %+v", a.SteeredMessages)
		}
	}
}

// BenchmarkSteerReceipt measures a steered message's receipt time (its
// taken_at less its sent_at, as the host records them: SPEC §11) for the
// same stream-json agent on the local runner and in a pod, in one run: a
// send starts a submission, a steer goes to it once it runs, and the
// receipt comes back on its stdout. Each iteration is a new submission of
// one agent.
func BenchmarkSteerReceipt(b *testing.B) {
	image, node := testCluster(b)
	for _, kube := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "kubernetes"}[kube]
		b.Run(name, func(b *testing.B) {
			cfg := hostConfig(b.TempDir(), testkit.SteerAgent, image, node, time.Second)
			if !kube {
				cfg.RunnerName, cfg.Kube = runner.Local, runner.KubeOptions{}
			}
			cfg.CommandSource = supervisor.SourceBuiltin
			s, err := supervisor.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			var got []float64
			id := ""
			for i := 0; i < b.N; i++ {
				if id == "" {
					sp, err := s.Spawn(b.Context(), "audit .")
					if err != nil {
						b.Fatal(err)
					}
					id = sp.AgentID
				} else if _, err := s.Send(b.Context(), id, "audit .", false); err != nil {
					b.Fatal(err)
				}
				testkit.Eventually(b, time.Minute, "the agent working", func() bool { l, _ := s.Logs(id, 0); return strings.Contains(l, "working") })
				r, err := s.Steer(b.Context(), id, "also audit tests")
				if err != nil {
					b.Fatal(err)
				}
				var sm proto.SteeredMessage
				testkit.Eventually(b, time.Minute, "the steered message folded", func() bool {
					info, _ := s.Agent(id)
					for _, m := range info.SteeredMessages {
						if m.ID == r.MessageID {
							sm = m
						}
					}
					return sm.Receipt == proto.ReceiptFolded
				})
				got = append(got, float64(sm.TakenAt.Sub(sm.SentAt.Time).Microseconds())/1000)
				testkit.Eventually(b, time.Minute, "the submission ended", func() bool { info, _ := s.Agent(id); return info.Status != proto.StatusRunning })
			}
			b.ReportMetric(median(got), "ms-receipt-median")
			b.ReportMetric(maxOf(got), "ms-receipt-max")
		})
	}
}

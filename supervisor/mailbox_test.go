package supervisor

import (
	"context"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// session returns ctx as the multi-agent family's session s calls.
func session(ctx context.Context, s string) context.Context {
	return proto.WithCaller(ctx, proto.Caller{Session: s, Exact: true})
}

// waitMail waits on the mailbox of ctx's caller with the shortest timeout
// and returns its items' texts, acknowledging ack.
func waitMail(t *testing.T, s *Supervisor, ctx context.Context, ack uint64) (proto.MailboxResult, []string) {
	t.Helper()
	ms := proto.MinWaitTimeoutMS
	res, err := s.WaitMailbox(ctx, &ms, ack)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, it := range res.Items {
		texts = append(texts, it.Text)
	}
	return res, texts
}

// TestMailboxOfAnAgentAndOfTheRoot: a child's send_message to /root lands
// in its session's root mailbox; the child's own children's ends land in
// its mailbox, which a wait of its submission reads; items handed over
// come again until a wait acknowledges them; an agent cannot interrupt
// itself; the caller's parent interrupting makes no item.
func TestMailboxOfAnAgentAndOfTheRoot(t *testing.T) {
	s := newTestSupervisor(t, script, func(c *Config) { c.MaxAgents = 8 })
	ctx := session(t.Context(), "orchestrator")
	lead, err := s.SpawnTree(ctx, "sleep", "lead")
	if err != nil {
		t.Fatal(err)
	}
	inLead := proto.WithCaller(t.Context(), proto.Caller{AgentID: lead.AgentID, Exact: true})
	if _, err := s.MessageAgent(inLead, "/root", "halfway there", false); err != nil {
		t.Fatal(err)
	}
	res, texts := waitMail(t, s, ctx, 0)
	if want := proto.FormatMessage("/root/lead", "/root", "halfway there"); len(texts) != 1 || texts[0] != want {
		t.Fatalf("root mailbox: %q, want %q", texts, want)
	}
	first := res.Items[0].Seq
	if _, again := waitMail(t, s, ctx, 0); len(again) != 1 {
		t.Fatalf("an item not acknowledged is not handed over again: %q", again)
	}
	s.ackMailbox(proto.CallerOf(ctx), first) // what the next wait does first
	if n := rootItems(s, "orchestrator"); n != 0 {
		t.Fatalf("%d items after the acknowledgement", n)
	}
	worker, err := s.SpawnTree(inLead, "ok done", "worker")
	if err != nil || worker.AgentPath != "/root/lead/worker" {
		t.Fatalf("nested spawn: %+v %v", worker, err)
	}
	_, texts = waitMail(t, s, inLead, 0)
	if want := proto.FormatEnd("/root/lead/worker", proto.TreeCompleted, "fine ok done"); len(texts) != 1 || texts[0] != want {
		t.Fatalf("the lead's mailbox: %q, want %q", texts, want)
	}
	if _, err := s.InterruptAgent(inLead, "/root/lead"); errText(err) != "an agent cannot interrupt itself" {
		t.Fatalf("self interrupt: %v", err)
	}
	// The orchestrator interrupts its own child: no item (Memo's
	// interrupted is its own doing).
	before, err := s.InterruptAgent(ctx, "lead")
	if err != nil || before.Status != proto.TreeRunning {
		t.Fatalf("interrupt: %+v %v", before, err)
	}
	if n := rootItems(s, "orchestrator"); n != 0 {
		t.Fatalf("the parent's own interrupt made %d item(s)", n)
	}
	if l, _ := s.ListTree(inLead, ""); len(l.Agents) != 2 || l.Agents[0].AgentPath != "/root/lead" || l.Agents[1].Status != proto.TreeCompleted {
		t.Fatalf("list from the lead: %+v", l)
	}
}

// TestMailboxSurvivesARestart: an end the orchestrator did not take yet,
// and the interrupt of a child that the host's end made, reach the wait
// of the same session on the next host.
func TestMailboxSurvivesARestart(t *testing.T) {
	start, _ := hostOf(t, script)
	s := start()
	ctx := session(t.Context(), "orchestrator")
	done, err := s.SpawnTree(ctx, "ok", "done")
	if err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, done.AgentID)
	if _, err := s.SpawnTree(ctx, "sleep", "long"); err != nil {
		t.Fatal(err)
	}
	shutdownNow(t, s)

	s = start()
	_, texts := waitMail(t, s, ctx, 0)
	want := []string{
		proto.FormatEnd("/root/done", proto.TreeCompleted, "fine ok"),
		proto.FormatEnd("/root/long", proto.TreeInterrupted, "interrupted (host ended)"),
	}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("after the restart: %q\nwant %q", texts, want)
	}
	if n := rootItems(s, "another"); n != 0 {
		t.Fatalf("another session has %d item(s)", n)
	}
}

// rootItems counts the items of session's root mailbox, handed over or
// not.
func rootItems(s *Supervisor, session string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.roots[session]; b != nil {
		return b.Len()
	}
	return 0
}

// TestEndItemSaysHowTheTurnEnded: a follow-up taken while the child runs
// starts its next turn at once when this one ends; the item the parent
// gets for the ended turn still says completed with the turn's answer,
// not the running status of the turn that followed.
func TestEndItemSaysHowTheTurnEnded(t *testing.T) {
	s := newTestSupervisor(t, "cat >/dev/null; sleep 0.3; echo turn ok", func(c *Config) { c.MaxAgents = 8 })
	ctx := session(t.Context(), "orchestrator")
	if _, err := s.SpawnTree(ctx, "first", "worker"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MessageAgent(ctx, "worker", "second", true); err != nil {
		t.Fatal(err)
	}
	var texts []string
	var ack uint64
	for len(texts) < 2 {
		res, got := waitMail(t, s, ctx, ack)
		if len(res.Items) > 0 {
			ack = res.Items[len(res.Items)-1].Seq
		}
		texts = append(texts, got...)
	}
	want := proto.FormatEnd("/root/worker", proto.TreeCompleted, "turn ok")
	for i, text := range texts {
		if text != want {
			t.Errorf("item %d of the parent's mailbox: %q, want %q", i+1, text, want)
		}
	}
}

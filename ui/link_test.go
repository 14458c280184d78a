package ui

import (
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestALinkDownIsSaidUntilItIsBack: a viewer over ssh whose link dropped
// says what it does ("reconnecting to ssh://…") in the notes line ahead of
// every other note while it lasts, and once the link is back says so once
// (a reply) and the note is gone; a reply standing when the link drops
// does not hide the note; the table's title names the host's
// machine (SPEC §9).
func TestALinkDownIsSaidUntilItIsBack(t *testing.T) {
	f := threeAgents()
	f.cfg.Where = "ssh://buildbox/src/app"
	f.cfg.Notes = []string{"attached to subdash serve, pid 42 on ssh://buildbox/src/app; q detaches, the agents go on"}
	h := newHarness(t, f, 160, 30)
	h.wantScreen("agents 3 · ssh://buildbox/src/app")
	h.send(ChangesMsg{Changes: []proto.Change{{Link: "reconnected to ssh://buildbox/src/app after 0.4s", LinkUp: true}}})
	h.wantScreen("reconnected to ssh://buildbox/src/app after 0.4s") // an earlier reply, with no agent running (no tick ends it)
	h.send(ChangesMsg{Changes: []proto.Change{{Link: "reconnecting to ssh://buildbox/src/app (the ssh link ended: Connection to 10.0.0.2 closed by remote host)"}}})
	h.wantScreen("⚠ reconnecting to ssh://buildbox/src/app (the ssh link ended: Connection to 10.0.0.2 closed by remote host) · 1 more")
	h.send(ChangesMsg{Changes: []proto.Change{{Link: "reconnecting to ssh://buildbox/src/app, 28s left: try 2 failed: ssh could not connect: Connection refused"}}})
	h.wantScreen("⚠ reconnecting to ssh://buildbox/src/app, 28s left: try 2 failed")
	h.noScreen("closed by remote host")
	h.send(ChangesMsg{Changes: []proto.Change{{Link: "reconnected to ssh://buildbox/src/app after 2.1s", LinkUp: true}}})
	h.wantScreen("reconnected to ssh://buildbox/src/app after 2.1s")
	h.noScreen("reconnecting to")
	h.keys("?")
	h.noScreen("reconnecting to")
}

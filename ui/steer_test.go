package ui

import (
	"strings"
	"testing"
)

// The busy question offers steer (s) only for an agent that takes
// messages while it runs; s steers and the message line says the receipt
// is pending.
func TestBusyQuestionOffersSteer(t *testing.T) {
	f := threeAgents()
	f.agents[0].info.Steerable = true
	h, _ := newAttnHarness(t, f, f)
	h.keys("s")
	h.typeText("also check the tests folder")
	h.keys("enter")
	h.wantScreen("i interrupt it and send · s steer it · q/enter queue: send when it ends · esc cancel")
	h.keys("s")
	h.wantCalls(`steer 3fa2c1d0 "also check the tests folder"`)
	h.wantScreen("steered into 3fa2c1d0: the receipt follows on its row")
}

// Where the agent reads its message once, s is not offered and does
// nothing in the question.
func TestBusyQuestionWithoutSteer(t *testing.T) {
	f := threeAgents()
	h, _ := newAttnHarness(t, f, f)
	h.keys("s")
	h.typeText("more")
	h.keys("enter")
	h.wantScreen("i interrupt it and send · q/enter queue: send when it ends · esc cancel")
	if strings.Contains(h.screen(), "steer") {
		t.Fatalf("steer offered:\n%s", h.screen())
	}
	h.keys("s")
	h.wantCalls()
}

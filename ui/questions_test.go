package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// Answer answers a pending question of the fake, as the supervisor does:
// every question needs an answer.
func (f *fakeSup) Answer(ctx context.Context, id, requestID string, answers map[string][]string) (proto.QuestionResult, error) {
	f.noIO("Answer")
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]string, 0, len(answers))
	for q, a := range answers {
		keys = append(keys, fmt.Sprintf("%s=%s", q, strings.Join(a, "+")))
	}
	sort.Strings(keys)
	f.record("answer %s %s %s", id[:8], requestID, strings.Join(keys, " "))
	a := f.find(id)
	res := proto.QuestionResult{AgentID: id, RequestID: requestID, Answers: map[string]string{}}
	for q, l := range answers {
		res.Answers[q] = strings.Join(l, ", ")
	}
	a.info.PendingQuestions = nil
	a.info.Now = ""
	f.changed(id)
	return res, nil
}

// questionsFake is three agents, the first asking the recorded question
// ("Which DB?") and a multi-select one in one request.
func questionsFake() *fakeSup {
	f := threeAgents()
	f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
	f.mu.Lock()
	a := f.find(idA)
	a.info.PendingQuestions = []proto.PendingQuestion{{RequestID: "q-1", Questions: []proto.Question{
		{Question: "Which DB?", Header: "DB", Options: []proto.QuestionOption{{Label: "Postgres", Description: "pg"}, {Label: "SQLite", Description: "lite"}}},
		{Question: "Which checks?", MultiSelect: true, Options: []proto.QuestionOption{{Label: "vet"}, {Label: "lint"}, {Label: "race"}}},
	}}}
	a.info.Now = proto.QuestionActivity(a.info.PendingQuestions[0])
	f.mu.Unlock()
	return f
}

// What the user sees: the row says what the agent asks; A opens the panel
// with the options numbered; a number chooses, enter goes on, space
// toggles, o types another answer; enter on the last sends every answer.
func TestQuestionPanelAnswers(t *testing.T) {
	h := newHarness(t, questionsFake(), 160, 30)
	h.wantScreen("asks: DB: Which DB? [Postgres / SQLite] (+1 more)")
	h.keys("A")
	h.wantScreen("? agent 3fa2c1d0 asks (question 1 of 2)")
	h.wantScreen("DB: Which DB?")
	h.wantScreen("1. ( ) Postgres — pg")
	h.wantScreen("2. ( ) SQLite — lite")
	h.keys("2")
	h.wantScreen("2. (•) SQLite — lite")
	h.keys("enter")
	h.wantScreen("Which checks?  (any number: space toggles)")
	h.keys("space", "down", "down", "space")
	h.wantScreen("1. [x] vet")
	h.wantScreen("3. [x] race")
	h.keys("o")
	h.typeText("fuzz")
	h.keys("enter")
	h.wantScreen("o. other: fuzz")
	h.wantCalls()
	h.keys("enter")
	h.wantCalls("answer 3fa2c1d0 q-1 Which DB?=SQLite Which checks?=vet+race+fuzz")
	h.wantScreen("3fa2c1d0: answered")
	h.noScreen("? agent 3fa2c1d0 asks")
}

// esc closes the panel without answering; enter on the row of an agent
// that asks opens it too; a read-only viewer refuses it.
func TestQuestionPanelClosesAndRefuses(t *testing.T) {
	h := newHarness(t, questionsFake(), 160, 30)
	h.keys("enter")
	h.wantScreen("? agent 3fa2c1d0 asks")
	h.keys("esc")
	h.noScreen("? agent 3fa2c1d0 asks")
	h.wantScreen("the question is still open; A answers it")
	h.wantCalls()
	h.keys("j", "A")
	h.wantScreen("asks nothing now")

	f := questionsFake()
	f.cfg.ReadOnly = true
	h = newHarness(t, f, 160, 30)
	h.keys("A")
	h.wantScreen("read-only viewer: answer refused")
	h.keys("enter")
	h.noScreen("? agent 3fa2c1d0 asks")
	h.wantCalls()
}

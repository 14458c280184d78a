package wire

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/subdash/subdash/supervisor/control/wire/wiretest"
	"github.com/subdash/subdash/supervisor/proto"
)

// Within a protocol the wire stays additive (SPEC §6, docs/automation.md):
// a JSON name once sent is never renamed or dropped. testdata/wire.golden
// lists, for every route and event, the JSON names of its answer: the
// answer type filled in whole (every optional field set), flattened to
// paths ("logs.runs_dir",
// "agents[].status", "status.{}" for a map's values). A rename or a drop
// fails TestWireNames; a new name is added to the golden with -update.
// The server's TestWireRoutesAnswerTheirTypes checks on a live host that
// each route answers with no name outside its golden entry.

var update = flag.Bool("update", false, "rewrite testdata/wire.golden and the route table of SPEC.md")

// wireTypes maps each route or event to its answer's type.
var wireTypes = []struct {
	route string
	v     any
}{
	{Info.Pattern(), proto.Info{}},
	{Config.Pattern(), ConfigResult{}},
	{List.Pattern(), proto.ListResult{}},
	{Spawn.Pattern(), proto.SpawnResult{}},
	{Send.Pattern(), proto.SendResult{}},
	{Resend.Pattern(), proto.SendResult{}},
	{Interrupt.Pattern(), proto.StatusResult{}},
	{Close.Pattern(), proto.StatusResult{}},
	{CloseMany.Pattern(), proto.CloseManyResult{}},
	{Resume.Pattern(), proto.StatusResult{}},
	{Forget.Pattern(), proto.StatusResult{}},
	{Seen.Pattern(), proto.StatusResult{}},
	{CancelQueue.Pattern(), proto.StatusResult{}},
	{Approve.Pattern(), proto.ApprovalResult{}},
	{Deny.Pattern(), proto.ApprovalResult{}},
	{Answer.Pattern(), proto.QuestionResult{}},
	{Wait.Pattern(), proto.WaitResult{}},
	{Window.Pattern(), WindowResult{}},
	{Transcript.Pattern(), TranscriptResult{}},
	{Windows.Pattern(), WindowsResult{}},
	{LogSearch.Pattern(), proto.SearchResult{}},
	{Follow.Pattern(), FollowRequest{}},
	{Search.Pattern() + " (a hit line)", proto.SearchHit{}},
	{Search.Pattern() + " (the last line)", proto.SearchSummary{}},
	{TreeSpawn.Pattern(), proto.TreeAgent{}},
	{TreeMessage.Pattern(), proto.TreeAgent{}},
	{TreeInterrupt.Pattern(), proto.TreeAgent{}},
	{TreeWait.Pattern(), proto.MailboxResult{}},
	{TreeList.Pattern(), proto.TreeList{}},
	{"error", ErrorBody{}},
	{"event: " + EventAgent, proto.AgentInfo{}},
	{"event: " + EventSynced, struct{}{}},
	{"event: " + EventOutput, OutputEvent{}},
	{"event: " + EventOutputs, OutputsEvent{}},
	{"event: " + EventWarning, WarningEvent{}},
	{"event: " + EventStream, StreamEvent{}},
	{"event: " + EventWindow, WindowEvent{}},
}

// TestEveryRouteHasItsNames: each route that answers JSON has its entry
// in wireTypes (and so in the golden); the others answer text or events.
func TestEveryRouteHasItsNames(t *testing.T) {
	text := map[Route]bool{Message: true, Logs: true, Lines: true, Diff: true, Events: true}
	for _, rt := range Routes {
		found := false
		for _, w := range wireTypes {
			found = found || strings.HasPrefix(w.route, rt.Pattern())
		}
		if found == text[rt] {
			t.Errorf("%s: in wireTypes %v, answers text or events %v", rt.Pattern(), found, text[rt])
		}
	}
}

// TestWireNames compares every answer's JSON names with the golden; each
// is snake_case (protocol 2: no Go names on the wire).
func TestWireNames(t *testing.T) {
	var b strings.Builder
	for _, w := range wireTypes {
		fmt.Fprintf(&b, "%s\n", w.route)
		for _, p := range wiretest.Names(t, w.v) {
			fmt.Fprintf(&b, "\t%s\n", p)
			if strings.IndexFunc(p, unicode.IsUpper) >= 0 {
				t.Errorf("%s answers %q, not snake_case", w.route, p)
			}
		}
	}
	golden := wiretest.GoldenPath()
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("the wire changed: JSON names are added (go test ./supervisor/control/wire -run TestWireNames -update), never renamed or dropped\n%s",
			wiretest.DiffLines(string(want), b.String()))
	}
}

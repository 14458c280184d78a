package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor"
)

// TestLongMessageFromStdin: `ctl spawn -` and `ctl send ID -` stream a
// message of several MiB from stdin to the host (FeatureTextMessage),
// which feeds it to the child trimmed and whole; `ctl logs` shows what the
// child counted.
func TestLongMessageFromStdin(t *testing.T) {
	w := newWorkspace(t)
	p := start(t, nil, append([]string{"serve", "--command", "wc -c"}, w.flags()...)...)
	waitListening(t, p, w.socket)
	body := strings.Repeat("0123456789abcdef", 5<<16) // 5 MiB
	want := strconv.Itoa(len(body) + 1)               // and the newline after it
	r := runCtl(t, nil, "\n\t "+body+" \n\n", "spawn", "-", "--socket", w.socket)
	var sp supervisor.SpawnResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &sp) != nil {
		t.Fatalf("spawn -: %+v", r)
	}
	var wr supervisor.WaitResult
	ctlOK(t, w, &wr, "wait", sp.AgentID)
	if d := wr.Details[sp.AgentID]; d.Status != "completed" || d.LastOutput == nil || *d.LastOutput != want {
		t.Fatalf("the child counted %+v, want %s bytes", d, want)
	}
	r = runCtl(t, nil, body+body, "send", sp.AgentID, "-", "--socket", w.socket)
	if r.code != 0 {
		t.Fatalf("send -: %+v", r)
	}
	ctlOK(t, w, &wr, "wait", sp.AgentID)
	if out := ctlOK(t, w, nil, "logs", sp.AgentID); strings.TrimSpace(out) != strconv.Itoa(2*len(body)+1) {
		t.Fatalf("logs of the second submission: %q, want %d", out, 2*len(body)+1)
	}
}

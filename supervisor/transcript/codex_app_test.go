package transcript

import (
	"strings"
	"testing"
)

// An approval request of codex's app-server as subdash shows it (SPEC §12):
// a file change names its files from the item it is about (its request
// names only the item), a permissions request what it asks for, and a
// request subdash does not answer says so.
func TestCodexAppApprovalRequests(t *testing.T) {
	p := NewParser(FormatCodex)
	p.Line([]byte(`{"method":"item/started","params":{"item":{"type":"fileChange","id":"call_1","changes":[{"path":"/w/a.go","kind":{"type":"update","move_path":null},"diff":"@@"},{"path":"/w/b.go","kind":{"type":"add"},"diff":"+x"}],"status":"inProgress"},"threadId":"t","turnId":"u"}}`))
	es := p.Line([]byte(`{"method":"item/fileChange/requestApproval","id":3,"params":{"threadId":"t","turnId":"u","itemId":"call_1","reason":"outside the workspace","grantRoot":"/w"}}`))
	if len(es) != 1 || es[0].Kind != KindApproval || es[0].Tool != "apply_patch" || es[0].ID != "3" ||
		es[0].Summary != "update /w/a.go, add /w/b.go" || !strings.HasPrefix(es[0].Text, "outside the workspace\n") || !strings.HasSuffix(es[0].Text, "path: /w") {
		t.Fatalf("file change request: %+v", es)
	}
	c, ok := ParseCodexApproval([]byte(`{"method":"item/permissions/requestApproval","id":"p","params":{"threadId":"t","turnId":"u","itemId":"i","cwd":"/w","permissions":{"network":{"enabled":true}}}}`), "")
	if !ok || c.Tool != "permissions" || c.RequestID != "p" || c.Summary != "network={…}" {
		t.Fatalf("permissions request: %+v %v", c, ok)
	}
	if _, ok := ParseCodexApproval([]byte(`{"method":"turn/started","params":{}}`), ""); ok {
		t.Fatal("a notification parsed as a request")
	}
	es = p.Line([]byte(`{"method":"item/tool/requestUserInput","id":9,"params":{}}`))
	if len(es) != 1 || es[0].Kind != KindUnknown || es[0].Text != "request item/tool/requestUserInput (subdash answers no such request)" {
		t.Fatalf("other request: %+v", es)
	}
}

// A failed turn says codex's message, its details and its class; an HTTP
// class names the status.
func TestCodexAppTurnErrors(t *testing.T) {
	p := NewParser(FormatCodex)
	es := p.Line([]byte(`{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","items":[],"status":"failed","error":{"message":"stream error","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":502}},"additionalDetails":"bad gateway"}}}}`))
	if len(es) != 1 || es[0].Kind != KindResult || !es[0].IsError || es[0].Text != "stream error: bad gateway (responseTooManyFailedAttempts, HTTP 502)" {
		t.Fatalf("failed turn: %+v", es)
	}
	p = NewParser(FormatCodex)
	es = p.Line([]byte(`{"error":{"code":-32600,"message":"model not allowed"},"id":"turn/start#message"}`))
	if o := p.Outcome(); len(es) != 1 || !o.Final || o.Success || o.Error != "codex refused turn/start: model not allowed" {
		t.Fatalf("refused turn: %+v %+v", es, o)
	}
}

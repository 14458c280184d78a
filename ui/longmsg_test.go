package ui

import (
	"io"
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// longAgent is a dashboard of agent B in status st, whose latest message
// (whole) is over editInline and whose snapshot holds its head.
func longAgent(t *testing.T, st proto.Status) (f *fakeSup, h *harness, whole string) {
	t.Helper()
	f = newFake()
	whole = strings.Repeat("a long task; ", 6000) + "the end"
	f.add(idB, whole[:40]+"...[truncated: 78007 bytes in all]", st)
	f.whole = map[string]string{idB: whole}
	return f, newHarness(t, f, 120, 30), whole
}

// TestResendOfALongMessageAsksTheHost: R on a message whose head is cut
// has the host send it again from its file; the dashboard does not fetch
// it.
func TestResendOfALongMessageAsksTheHost(t *testing.T) {
	_, h, _ := longAgent(t, proto.StatusCompleted)
	h.keys("R")
	h.wantCalls("resend " + idB[:8] + " interrupt=false queue=false")
	h.wantScreen("sent to " + idB[:8])
}

// TestResendOfALongMessageToARunningAgentQueues: on a running agent, R asks
// as send does, and q queues the message from the host's file.
func TestResendOfALongMessageToARunningAgentQueues(t *testing.T) {
	_, h, _ := longAgent(t, proto.StatusRunning)
	h.keys("R")
	h.wantScreen("interrupt it and resend now, queue the message")
	h.keys("q")
	h.wantCalls("resend " + idB[:8] + " interrupt=false queue=true")
}

// TestEditOfALongMessageOpensTheEditor: e on a message over 64
// KiB does not put it in the one-line input (8 MB there took 640 MB and 250
// ms a key): it runs the editor (tea.Exec) without reading the message in
// Update. The editor's command streams the whole message into a file, the
// changed file is sent streamed, and removed.
func TestEditOfALongMessageOpensTheEditor(t *testing.T) {
	f, h, whole := longAgent(t, proto.StatusCompleted)
	h.m.opts.Editor = func(string) tea.ExecCommand { t.Fatal("the editor ran in Update"); return nil }
	h.keys("e")
	if h.execs != 1 || h.m.mode == modeInput {
		t.Fatalf("e on a message of %d bytes: %d execs, mode %v; want the editor, not the input", len(whole), h.execs, h.m.mode)
	}
	h.wantCalls()

	// What the exec command does: the message into a file, the editor on it.
	var edited string
	e := &editExec{sup: f, id: idB, editor: func(path string) tea.ExecCommand {
		return funcExec(func() error {
			b, err := os.ReadFile(path)
			edited = string(b)
			if err == nil {
				err = os.WriteFile(path, append(b, " and more"...), 0o600)
			}
			return err
		})
	}}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if edited != whole || !e.changed {
		t.Fatalf("the editor's file held %d bytes (want the whole %d), changed %v", len(edited), len(whole), e.changed)
	}
	h.send(editedMsg{id: idB, path: e.path, changed: e.changed})
	h.wantCalls("write message "+idB[:8], "send from "+idB[:8]+" 78016 bytes \"a long task; a long \" interrupt=false queue=false")
	if _, err := os.Stat(e.path); !os.IsNotExist(err) {
		t.Errorf("the sent file %s is still there (%v)", e.path, err)
	}
	h.wantScreen("sent to " + idB[:8])
}

// TestEditorLeftUnchangedSendsNothing: quitting the editor without saving
// sends nothing, says so, and removes the file.
func TestEditorLeftUnchangedSendsNothing(t *testing.T) {
	f, h, _ := longAgent(t, proto.StatusCompleted)
	e := &editExec{sup: f, id: idB, editor: func(string) tea.ExecCommand { return funcExec(func() error { return nil }) }}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	h.send(editedMsg{id: idB, path: e.path, changed: e.changed})
	h.wantCalls("write message " + idB[:8])
	h.wantScreen("not resent to " + idB[:8] + ": the message was not changed")
	if _, err := os.Stat(e.path); !os.IsNotExist(err) {
		t.Errorf("the file %s is still there (%v)", e.path, err)
	}
}

// funcExec is a tea.ExecCommand that runs a function.
type funcExec func() error

func (f funcExec) Run() error        { return f() }
func (funcExec) SetStdin(io.Reader)  {}
func (funcExec) SetStdout(io.Writer) {}
func (funcExec) SetStderr(io.Writer) {}

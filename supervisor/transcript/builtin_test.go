package transcript

import "testing"

// TestBuiltinProtocol: the lines the built-in agent writes are read back
// as the receipt of the message they name and as a task's end; no other
// line is (SPEC §11 steer).
func TestBuiltinProtocol(t *testing.T) {
	const id = "0c35a874-e6e6-40f7-877a-acab21bb8e1a"
	for _, c := range []struct {
		line         string
		id, receipt  string
		taken, ended bool
	}{
		{line: BuiltinTakenLine(id, "folded", "after 3 files, before ui/x.go", "also audit tests") + "\n", id: id, receipt: "folded", taken: true},
		{line: BuiltinTakenLine(id, "next_turn", "as a next task, after the last one ended", "summarize ."), id: id, receipt: "next_turn", taken: true},
		{line: "↪ took message " + id + " (pending) now: x"},
		{line: "a.go:1: // TODO ↪ took message " + id + " (folded) x"},
		{line: BuiltinDone + "\n", ended: true},
		{line: BuiltinFailed + "\r\n", ended: true},
		{line: BuiltinDone + " early"},
	} {
		gotID, gotReceipt, ok := ParseBuiltinTaken([]byte(c.line))
		if ok != c.taken || gotID != c.id || gotReceipt != c.receipt {
			t.Errorf("ParseBuiltinTaken(%q) = %q %q %v, want %q %q %v", c.line, gotID, gotReceipt, ok, c.id, c.receipt, c.taken)
		}
		if got := IsBuiltinEnd([]byte(c.line)); got != c.ended {
			t.Errorf("IsBuiltinEnd(%q) = %v, want %v", c.line, got, c.ended)
		}
	}
}

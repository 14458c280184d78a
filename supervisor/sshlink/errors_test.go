package sshlink

import (
	"strings"
	"testing"
)

// TestSSHsLinesAreClassified: the lines OpenSSH 9.2 writes for each
// failure (as measured in notes/ssh.md) get their kind, a notice is no
// reason, and each kind's message says what to do, naming the target.
func TestSSHsLinesAreClassified(t *testing.T) {
	for line, want := range map[string]Kind{
		"root@127.0.0.1: Permission denied (publickey).":                                            Auth,
		"No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.": HostKey,
		"Host key verification failed.":                                                             HostKey,
		"ssh: connect to host 127.0.0.1 port 1: Connection refused":                                 Unreachable,
		"ssh: Could not resolve hostname no-such-host.invalid: Name or service not known":           Unreachable,
		"ssh: connect to host 127.0.0.1 port 2222: Connection timed out":                            Unreachable,
		"Connection to 127.0.0.1 closed by remote host.":                                            Unreachable,
		"Timeout, server 127.0.0.1 not responding.":                                                 Unreachable,
		"client_loop: send disconnect: Broken pipe":                                                 Unreachable,
		"channel 1: open failed: connect failed: open failed":                                       Other,
	} {
		if got := kindOfLine(line); got != want {
			t.Errorf("kindOfLine(%q) = %d, want %d", line, got, want)
		}
	}
	var e tail
	_, _ = e.Write([]byte("Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.\r\nroot@127.0.0.1: Permission denied (publickey).\r\n\n"))
	if got := e.reason(); got != "root@127.0.0.1: Permission denied (publickey)." {
		t.Fatalf("reason %q: the notice is no reason", got)
	}
	tg := Target{Host: "buildbox", User: "me", Dir: "/src"}
	batch := sshFailure(tg, Options{Batch: true}, 255, &e, "ssh could not connect").Error()
	if !strings.HasPrefix(batch, "ssh://me@buildbox/src: ssh could not connect: root@127.0.0.1: Permission denied (publickey); ") ||
		!strings.Contains(batch, "load the key into ssh-agent (ssh-add)") || !strings.Contains(batch, "`ssh me@buildbox true`") {
		t.Errorf("an auth failure without prompts says: %s", batch)
	}
	if asked := sshFailure(tg, Options{Terminal: nil}, 255, &e, "ssh could not connect"); !asked.Lasting() || asked.Kind != Auth {
		t.Errorf("an auth failure is lasting (a reconnect gives up at once): %+v", asked)
	}
	var down tail
	_, _ = down.Write([]byte("ssh: connect to host 10.0.0.2 port 22: Connection refused\n"))
	if d := sshFailure(tg, Options{}, 255, &down, "ssh could not connect"); d.Lasting() || !strings.Contains(d.Error(), "check the host name, the network and that sshd runs on buildbox") {
		t.Errorf("an unreachable host is worth a retry and says what to check: %v", d)
	}
	var quiet tail
	if q := sshFailure(tg, Options{}, 255, &quiet, "ssh could not connect").Error(); !strings.Contains(q, "ssh exited with status 255 and said nothing") {
		t.Errorf("a silent ssh: %s", q)
	}
}

// TestTailKeepsTheEnd: a chatty ssh (LogLevel DEBUG) costs at most
// tailMax bytes, and its last line is kept.
func TestTailKeepsTheEnd(t *testing.T) {
	var e tail
	for i := 0; i < 5000; i++ {
		_, _ = e.Write([]byte("debug1: a line that says nothing much\n"))
	}
	_, _ = e.Write([]byte("Connection closed by 10.0.0.2 port 22\n"))
	if len(e.buf) > tailMax || e.last() != "Connection closed by 10.0.0.2 port 22" {
		t.Fatalf("kept %d bytes, last %q", len(e.buf), e.last())
	}
}

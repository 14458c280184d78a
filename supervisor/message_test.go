package supervisor

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// jsonText is what a message given as a JSON string arrives as: each byte
// that is not valid UTF-8 is U+FFFD (encoding/json), then it is trimmed.
func jsonText(raw string) string {
	var b strings.Builder
	for len(raw) > 0 {
		c, n := utf8.DecodeRuneInString(raw)
		if c == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(raw[:n])
		}
		raw = raw[n:]
	}
	return strings.TrimSpace(b.String())
}

// TestReadMessageIsTheJSONMessage: a message read from a stream is the
// message its JSON form gives (SPEC §3: trimmed, invalid UTF-8 as U+FFFD),
// whatever the reads' sizes, with characters and invalid bytes across the
// 64 KiB reads.
func TestReadMessageIsTheJSONMessage(t *testing.T) {
	s := newTestSupervisor(t, "cat")
	long := strings.Repeat("a", 64<<10-1)
	for name, raw := range map[string]string{
		"plain":                  "hello",
		"surrounding space":      " \t\n hello world \r\n\u00a0",
		"unicode space":          "\u2003\u0085task\u3000",
		"invalid bytes":          "\xffhe\xc3llo\xe2\x82",
		"invalid at both ends":   "\xc3 task \xe2",
		"character across reads": long + "é" + long + "日本" + "  \n",
		"invalid across reads":   long + "\xe2\x82" + long + "\xf0\x9f\x98",
		"space across reads":     "task" + strings.Repeat(" ", 200<<10) + "\u2003",
	} {
		for how, r := range map[string]func() io.Reader{
			"whole":      func() io.Reader { return strings.NewReader(raw) },
			"byte-wise":  func() io.Reader { return iotest.OneByteReader(strings.NewReader(raw)) },
			"half reads": func() io.Reader { return iotest.HalfReader(strings.NewReader(raw)) },
		} {
			if how == "byte-wise" && len(raw) > 1<<10 {
				continue // the same boundaries, much slower
			}
			m, err := s.ReadMessage(r())
			if err != nil {
				t.Fatalf("%s, %s: %v", name, how, err)
			}
			got, err := os.ReadFile(m.path)
			want := jsonText(raw)
			if err != nil || string(got) != want {
				t.Errorf("%s, %s: file holds %q (%v), want %q", name, how, cut(string(got)), err, cut(want))
			}
			if m.Len() != len(want) || m.Head() != journal.MessageHead(want) {
				t.Errorf("%s, %s: len %d head %q, want %d %q", name, how, m.Len(), cut(m.Head()), len(want), cut(journal.MessageHead(want)))
			}
			m.Discard()
		}
	}
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-40:]
	}
	return s
}

func TestReadMessageRefusesEmptyAndTooLong(t *testing.T) {
	s := newTestSupervisor(t, "cat")
	_, err := s.ReadMessage(strings.NewReader(" \n\t\u00a0 "))
	if errText(err) != "message must not be empty" {
		t.Errorf("blank message: %v", err)
	}
	_, err = s.ReadMessage(io.LimitReader(repeatReader('a'), proto.MaxMessageBytes+1))
	if want := fmt.Sprintf("message is %d bytes, longer than the limit of %d (64 MiB); put the task in a file and send its path", proto.MaxMessageBytes+1, proto.MaxMessageBytes); errText(err) != want {
		t.Errorf("too long: %v", err)
	}
	_, err = s.ReadMessage(repeatReader('a')) // never ends
	if want := fmt.Sprintf("message is more than %d bytes, longer than the limit", proto.MaxMessageBytes); !strings.HasPrefix(errText(err), want) {
		t.Errorf("endless: %v", err)
	}
	// A message of the limit and white space past it is taken.
	m, err := s.ReadMessage(io.MultiReader(io.LimitReader(repeatReader('a'), proto.MaxMessageBytes), strings.NewReader(strings.Repeat(" ", 1000))))
	if err != nil || m.Len() != proto.MaxMessageBytes {
		t.Fatalf("a message of the limit with trailing space: %v", err)
	}
	m.Discard()
	if left, _ := filepath.Glob(filepath.Join(s.RunDir(), "incoming", "*")); len(left) != 0 {
		t.Errorf("files left in incoming/: %v", left)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestStreamedMessageReachesTheChildWhole: a message read from a stream
// goes to the child's stdin whole (with its newline), is kept in the
// submission's .msg file, and Message returns it whole, for resend.
func TestStreamedMessageReachesTheChildWhole(t *testing.T) {
	s := newTestSupervisor(t, "sha256sum")
	raw := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	m, err := s.ReadMessage(bytes.NewReader(append(append([]byte("\n  "), raw...), "\n\n"...)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.SpawnMessage(t.Context(), m, "")
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, res.AgentID)
	want := fmt.Sprintf("%x  -", sha256.Sum256(append(raw, '\n')))
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || *d.LastOutput != want {
		t.Fatalf("child read %+v, want its sha256 %s", d, want)
	}
	whole, err := s.Message(t.Context(), res.AgentID, 0)
	if err != nil || whole != string(raw) {
		t.Fatalf("Message: %d bytes (%v), want the %d of the message", len(whole), err, len(raw))
	}
	if !strings.HasSuffix(res.LastMessage, fmt.Sprintf("...[truncated: %d bytes in all]", len(raw))) {
		t.Errorf("last_message %q does not name the whole length", cut(res.LastMessage))
	}
	if left, _ := filepath.Glob(filepath.Join(s.RunDir(), "incoming", "*")); len(left) != 0 {
		t.Errorf("files left in incoming/: %v", left)
	}
}

// TestRefusedStreamedMessageIsDiscarded: an operation that refuses a
// streamed message leaves no file behind.
func TestRefusedStreamedMessageIsDiscarded(t *testing.T) {
	s := newTestSupervisor(t, "cat")
	m, err := s.ReadMessage(strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(t.Context(), "no-such-agent", m, false); errText(err) != "agent not found: no-such-agent" {
		t.Fatalf("send to an unknown agent: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.RunDir(), "incoming", "*")); len(left) != 0 {
		t.Errorf("files left in incoming/: %v", left)
	}
}

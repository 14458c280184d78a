package proto

import (
	"strings"
	"testing"
)

// A message over the limit is kept as its head, cut at a character and
// marked with its whole length, which MessageCut recognises; one within
// the limit is kept whole and not taken for a head.
func TestMessageHeadIsWhatMessageCutRecognises(t *testing.T) {
	short := "fix the tests"
	if h := MessageHead(short, len(short), 16); h != short || MessageCut(h) {
		t.Fatalf("short message kept as %q (cut %v)", h, MessageCut(h))
	}
	long := strings.Repeat("é", 10) // 20 bytes
	h := MessageHead(long, len(long), 7)
	if h != "ééé...[truncated: 20 bytes in all]" || !MessageCut(h) {
		t.Fatalf("long message kept as %q (cut %v)", h, MessageCut(h))
	}
}

package proto

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MessageHead returns a message as snapshots, records and results hold it
// (SPEC §10): a message of size bytes whose first bytes are prefix (at
// least limit+1 of them, or all of it) is kept whole when size ≤ limit,
// else as its first limit bytes cut back to a character boundary and a
// marker of its whole length, "...[truncated: <size> bytes in all]". The
// whole message stays in its file (Reader.Message).
func MessageHead(prefix string, size, limit int) string {
	if size <= limit {
		return prefix[:size]
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(prefix[cut]) {
		cut--
	}
	return prefix[:cut] + fmt.Sprintf("...[truncated: %d bytes in all]", size)
}

// MessageCut reports whether head, a message as MessageHead keeps it, is
// only the head of a longer message: Reader.Message then gives the whole.
func MessageCut(head string) bool {
	return strings.HasSuffix(head, " bytes in all]") && strings.Contains(head, "...[truncated: ")
}

// MessageSize returns the whole length in bytes of the message whose head
// is head: the size its marker names when MessageCut, else len(head).
func MessageSize(head string) int {
	if !MessageCut(head) {
		return len(head)
	}
	i := strings.LastIndex(head, "...[truncated: ")
	n, err := strconv.Atoi(strings.TrimSuffix(head[i+len("...[truncated: "):], " bytes in all]"))
	if err != nil {
		return len(head)
	}
	return n
}

package output

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLineTextReusesOnlyBlocksOfDroppedLines: a block is reused only once
// every line that may have text in it is older than the scrollback's first
// line, and the current block never is; until then text put in it stays.
func TestLineTextReusesOnlyBlocksOfDroppedLines(t *testing.T) {
	lt := lineText{size: textBlockSize} // blocks already grown to full size, which are the ones reused
	big := strings.Repeat("a", textBlockSize/4)
	var old []string
	for i := 0; i < 4; i++ { // fills the first block: lines 0-3
		old = append(old, lt.put([]byte(big)[:textBlockSize/4-i]))
	}
	lt.seal(3)
	for line := int64(4); line < 200; line++ {
		lt.put([]byte("line " + strconv.FormatInt(line, 10) + strings.Repeat("b", 3000)))
		lt.seal(line)
		lt.recycle(3) // line 3 is still held
		for i, s := range old {
			if s != big[:textBlockSize/4-i] {
				t.Fatalf("after line %d: the text of line %d changed while held", line, i)
			}
		}
	}
	if len(lt.spare) != 0 {
		t.Fatalf("%d blocks spare while the oldest held line is 3; want none (the first block holds it, the rest hold newer lines)", len(lt.spare))
	}
	lt.recycle(4)
	if len(lt.spare) != 1 {
		t.Fatalf("%d blocks spare after line 3 was dropped; want the first block", len(lt.spare))
	}
	lt.recycle(1 << 40)
	if len(lt.used) != 1 || lt.used[0] != lt.cur {
		t.Fatalf("after every line was dropped %d blocks are in use; want the current one only", len(lt.used))
	}
}

// TestLineTextBlocksGrowWithTheOutput: a submission that printed one short
// line holds a block of firstTextBlock bytes, not textBlockSize; blocks
// double as the output grows, up to textBlockSize, and a line longer than
// the next block gets a block that holds it.
func TestLineTextBlocksGrowWithTheOutput(t *testing.T) {
	var lt lineText
	lt.put([]byte("agent line 1"))
	if got := cap(lt.cur.buf); got != firstTextBlock {
		t.Fatalf("one short line holds a block of %d bytes; want %d", got, firstTextBlock)
	}
	line := []byte(strings.Repeat("x", 100))
	var sizes []int
	for i := 0; i < 3000; i++ {
		if s := lt.put(line); s != string(line) {
			t.Fatalf("line %d reads %q", i, s)
		}
		if c := cap(lt.cur.buf); len(sizes) == 0 || sizes[len(sizes)-1] != c {
			sizes = append(sizes, c)
		}
	}
	want := []int{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10}
	if !slices.Equal(sizes, want) {
		t.Fatalf("block sizes %v; want %v", sizes, want)
	}
	var fresh lineText
	long := []byte(strings.Repeat("y", 5000))
	if s := fresh.put(long); s != string(long) || cap(fresh.cur.buf) < len(long) {
		t.Fatalf("a 5,000-byte first line got a block of %d bytes", cap(fresh.cur.buf))
	}
}

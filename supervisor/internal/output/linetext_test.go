package output

import (
	"strconv"
	"strings"
	"testing"
)

// TestLineTextReusesOnlyBlocksOfDroppedLines: a block is reused only once
// every line that may have text in it is older than the scrollback's first
// line, and the current block never is; until then text put in it stays.
func TestLineTextReusesOnlyBlocksOfDroppedLines(t *testing.T) {
	var lt lineText
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

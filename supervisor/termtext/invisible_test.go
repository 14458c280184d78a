package termtext

import "testing"

// invisibleIn holds every invisible format character termtext shows, and
// the zero-width non-joiner, which stays.
const invisibleIn = "a\u202Ab\u202Bc\u202Cd\u202De\u202Ef\u2066g\u2067h\u2068i\u2069j\u200Bk\u2060l\uFEFFm\u200En\u200Fo\u061Cp\u200Cq"

// invisibleOut is invisibleIn as it is shown: each invisible character a
// visible U+FFFD, U+200C kept.
const invisibleOut = "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg\uFFFDh\uFFFDi\uFFFDj\uFFFDk\uFFFDl\uFFFDm\uFFFDn\uFFFDo\uFFFDp\u200Cq"

// TestInvisibleCharactersAreShown: bidi controls (which can make
// a line read otherwise than its bytes), zero-width spaces, word joiners
// and byte order marks in an agent's output reach the log pane and the
// one-line texts (the table, notes) as a visible U+FFFD each, as invalid
// UTF-8 does; U+200C, which Persian and Indic text need, stays.
func TestInvisibleCharactersAreShown(t *testing.T) {
	for _, plain := range []bool{false, true} {
		got := convertAll(t, DefaultMaxWidth, plain, invisibleIn+"\n")
		if len(got) != 1 || got[0].text != invisibleOut || got[0].width != 32 {
			t.Errorf("plain=%v: the log pane shows %+v, want %+q, 32 cells", plain, got, invisibleOut)
		}
	}
	if got := OneLine(invisibleIn, 0); got != invisibleOut {
		t.Errorf("OneLine = %+q, want %+q", got, invisibleOut)
	}
}

package termtext

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// plainTokens make reads FeedTail can skip in: text, line ends, "\r",
// tabs, invalid bytes and wide characters, but no escape sequence.
var plainTokens = []string{"a", "0123456789", "\n", "\n", "\n", "\r", "\r\n", "\t", "漢", "e\u0301", "\xff", "\xe2", "\x9b", "\x00"}

func randomFrom(r *rand.Rand, toks []string, n int) string {
	var sb strings.Builder
	for range r.IntN(n) {
		sb.WriteString(toks[r.IntN(len(toks))])
	}
	return sb.String()
}

// TestFeedTailIsFeedWithoutTheMiddle checks FeedTail against Feed on the
// same input after the same history: the lines it emits are Feed's first
// line and its newest lines, the skipped count is the number left out,
// and both converters go on alike (the next read and the flush emit the
// same lines). Inputs mix skippable reads with escape sequences, DCS
// strings and the other hard tokens, so both of FeedTail's paths run.
func TestFeedTailIsFeedWithoutTheMiddle(t *testing.T) {
	r := rand.New(rand.NewPCG(randSeed, 13))
	skippedSome, fellBack := 0, 0
	for i := range 3000 {
		before, after := randomInput(r), randomInput(r)
		var read string
		switch i % 3 {
		case 0:
			read = randomFrom(r, plainTokens, 400)
		case 1:
			read = randomFrom(r, plainTokens, 200) + randomInput(r) + randomFrom(r, plainTokens, 200)
		default:
			read = randomFrom(r, plainTokens, 300) + tokens[r.IntN(len(tokens))] + randomFrom(r, plainTokens, 30)
		}
		keep := r.IntN(20)
		plain := i%5 == 0
		whole, tailed := newConverter(80, plain), newConverter(80, plain)
		var all, got []line
		collect := func(dst *[]line) func([]byte, int) {
			return func(text []byte, w int) { *dst = append(*dst, line{string(text), w}) }
		}
		whole.Feed([]byte(before), func([]byte, int) {})
		tailed.Feed([]byte(before), func([]byte, int) {})
		whole.Feed([]byte(read), collect(&all))
		skipped := tailed.FeedTail([]byte(read), keep, collect(&got))
		want := all
		if skipped > 0 {
			skippedSome++
			if len(got) != keep+1 {
				t.Fatalf("%q keep %d: %d lines emitted with %d skipped, want %d", read, keep, len(got), skipped, keep+1)
			}
			want = append(slices.Clone(all[:1]), all[1+skipped:]...)
		} else if strings.Count(read, "\n") > keep+1 {
			fellBack++
		}
		if !slices.Equal(got, want) {
			t.Fatalf("before %q read %q keep %d skipped %d:\n got %q\nwant %q", before, read, keep, skipped, texts(got), texts(want))
		}
		var restWhole, restTailed []line
		whole.Feed([]byte(after), collect(&restWhole))
		whole.Flush(collect(&restWhole))
		tailed.Feed([]byte(after), collect(&restTailed))
		tailed.Flush(collect(&restTailed))
		if !slices.Equal(restWhole, restTailed) {
			t.Fatalf("before %q read %q after %q: the converters went on differently:\n%q\n%q", before, read, after, texts(restWhole), texts(restTailed))
		}
	}
	if skippedSome < 500 || fellBack < 100 {
		t.Fatalf("skipped in %d inputs and fell back in %d: the inputs no longer exercise both paths", skippedSome, fellBack)
	}
}

// TestFeedTailSkipsAFlood checks the figure the scrollback relies on: a
// read of 10,000 plain lines kept to its newest 100 builds 101 lines.
func TestFeedTailSkipsAFlood(t *testing.T) {
	in := []byte(strings.Repeat("y\n", 10000) + "partial")
	c := NewConverter(0)
	var got []string
	skipped := c.FeedTail(in, 100, func(text []byte, _ int) { got = append(got, string(text)) })
	if skipped != 9899 || len(got) != 101 {
		t.Fatalf("skipped %d, emitted %d lines; want 9899 and 101", skipped, len(got))
	}
	if text, _, _ := c.Partial(); string(text) != "partial" {
		t.Fatalf("partial line %q", text)
	}
}

package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// benchInput repeats lines until the input holds at least 1 MiB.
func benchInput(line func(i int) string) []byte {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		sb.WriteString(line(i))
	}
	return []byte(sb.String())
}

// benchFeed feeds in, 64 KiB at a time as a pipe delivers it, b.N times,
// and asks for the partial line after each Feed, as the supervisor does.
func benchFeed(b *testing.B, in []byte) {
	c := NewConverter(0)
	lines := 0
	emit := func(text []byte, _ int) { lines++ }
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for p := in; len(p) > 0; {
			n := min(len(p), 64<<10)
			c.Feed(p[:n], emit)
			c.Partial()
			p = p[n:]
		}
	}
	b.ReportMetric(float64(lines)/float64(b.N)/float64(len(in))*1e6, "lines/MB")
}

func BenchmarkFeedASCII(b *testing.B) {
	b.Run("seq", func(b *testing.B) { // `seq 2000000`
		benchFeed(b, benchInput(func(i int) string { return strconv.Itoa(i+1) + "\n" }))
	})
	b.Run("50col", func(b *testing.B) {
		benchFeed(b, benchInput(func(i int) string {
			return fmt.Sprintf("2024-05-01 12:00:%02d INFO worker %6d done ok\n", i%60, i)
		}))
	})
	b.Run("80col", func(b *testing.B) {
		benchFeed(b, benchInput(func(i int) string {
			return fmt.Sprintf("%-79s\n", fmt.Sprintf("line %d: the quick brown fox jumps over the lazy dog, then", i))
		}))
	})
	b.Run("longline", func(b *testing.B) { // H05/H15: one line far over the cap
		benchFeed(b, []byte(strings.Repeat("0", 1<<20)))
	})
}

func BenchmarkFeedSGR(b *testing.B) {
	benchFeed(b, benchInput(func(i int) string {
		return fmt.Sprintf("\x1b[2m12:00:%02d\x1b[0m \x1b[1;32mINFO\x1b[0m request \x1b[38;5;208m%d\x1b[0m served in \x1b[38;2;10;200;30m%dms\x1b[m\n",
			i%60, i, i%97)
	}))
}

func BenchmarkFeedMixed(b *testing.B) {
	benchFeed(b, benchInput(func(i int) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf("\rDownloading %3d%% [%-20s]", i%101, strings.Repeat("=", i%21))
		case 1:
			return "\n状态: 完成 ✓ café\tnaïve 🇺🇸 résumé\n"
		case 2:
			return "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1b[?25l\x1b[2K\x1b[1Gplain tail\n"
		case 3:
			return "\x1b[31merror:\x1b[0m something\tfailed at line " + strconv.Itoa(i) + "\r\n"
		default:
			return "just a normal log line with enough words to look real\n"
		}
	}))
}

// TestZeroAllocs checks the steady state of the hot paths allocates nothing.
func TestZeroAllocs(t *testing.T) {
	for name, in := range map[string]string{
		"ascii":    "2024-05-01 12:00:00 INFO worker 12 done ok\n",
		"sgr":      "\x1b[1;32mINFO\x1b[0m request \x1b[38;2;10;200;30m12ms\x1b[m\n",
		"progress": "\rprogress 20%\rprogress 40%\x1b[K\n",
		"utf8":     "状态: 完成 ✓ café\tnaïve\n",
		"long":     strings.Repeat("x", 70000) + "\n",
	} {
		c := NewConverter(0)
		emit := func([]byte, int) {}
		p := []byte(strings.Repeat(in, 20))
		c.Feed(p, emit) // warm up the buffers
		if n := testing.AllocsPerRun(20, func() { c.Feed(p, emit); c.Partial() }); n != 0 {
			t.Errorf("%s: %v allocations per Feed", name, n)
		}
	}
}

// BenchmarkPlainLongSGRLine converts one line of n bytes made only of
// SGR-coloured characters, past the width cap, in one piece: the cost per
// byte must not grow with n (it once did, rescanning the rest of the line at
// each sequence: 0.8 s for 1 MiB). Compare the MB/s of the sizes.
func BenchmarkPlainLongSGRLine(b *testing.B) {
	for _, n := range []int{64 << 10, 1 << 20, 4 << 20} {
		in := []byte(strings.Repeat("\x1b[31mX\x1b[0m", n/len("\x1b[31mX\x1b[0m")))
		b.Run(fmt.Sprint(n>>10, "KiB"), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for range b.N {
				_ = Plain(in)
			}
		})
	}
}

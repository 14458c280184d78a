package output_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/runner"
)

// BenchmarkFeed measures the output pipeline alone, without a child: reads
// of a flood of 56-byte lines (64 KiB and 1 MiB, the smallest and largest
// read of a pipe) fed to one submission's output with its log file, as
// MB/s of output handled.
//
//	go test -run '^$' -bench BenchmarkFeed -benchtime 2s ./supervisor/internal/output/
func BenchmarkFeed(b *testing.B) {
	line := "the quick brown fox jumps over the lazy dog 0123456789\n"
	for _, size := range []int{64 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			read := []byte(strings.Repeat(line, size/len(line)+1)[:size])
			f, err := os.Create(filepath.Join(b.TempDir(), "feed.log"))
			if err != nil {
				b.Fatal(err)
			}
			o := output.New(output.Options{MaxLines: supervisor.DefaultScrollback})
			o.SetLog(f)
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.Feed(runner.Stdout, read)
				if i%256 == 255 {
					_ = f.Truncate(0) // keep the page cache small; the writes stay appends (O_APPEND is not set here)
					_, _ = f.Seek(0, 0)
				}
			}
			b.StopTimer()
			_ = o.Finish()
		})
	}
}

// BenchmarkFeedCapped is BenchmarkFeed's 1 MiB reads under --max-log-size
// (SPEC §5): no cap, 256 MiB and 1 GiB (the head and four tail parts, the
// oldest removed as each new one begins), and no cap with the free-space
// floor looking at the real filesystem. Every byte but the cap's dropped
// ones goes to disk (3 GiB for 3072 reads: mind the room in TMPDIR). Run
// them in one go: their ratios are the cost of the cap and of the floor
// (BENCHMARKS.md 4).
//
//	go test -run '^$' -bench BenchmarkFeedCapped -benchtime 3072x -count 3 ./supervisor/internal/output/
func BenchmarkFeedCapped(b *testing.B) {
	line := "the quick brown fox jumps over the lazy dog 0123456789\n"
	read := []byte(strings.Repeat(line, (1<<20)/len(line)+1)[:1<<20])
	for _, c := range []struct {
		name  string
		max   int64
		floor bool
	}{{"none", 0, false}, {"cap=256MiB", 256 << 20, false}, {"cap=1GiB", 1 << 30, false}, {"floor", 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			f, err := os.OpenFile(filepath.Join(dir, "1-feed.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			opt := output.Options{MaxLines: supervisor.DefaultScrollback, MaxLogSize: c.max}
			if c.floor {
				opt.Space = output.NewSpace(dir, nil, nil)
			}
			o := output.New(opt)
			o.SetLog(f)
			b.SetBytes(int64(len(read)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.Feed(runner.Stdout, read)
			}
			b.StopTimer()
			_ = o.Finish()
		})
	}
}

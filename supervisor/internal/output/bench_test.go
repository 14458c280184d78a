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

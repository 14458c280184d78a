package search

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchLogs writes total bytes of agent-like output into files of 20 MB
// in dir: plain lines, some coloured, a progress bar rewritten by \r,
// and needle once per file.
func benchLogs(b *testing.B, dir string, total int) []string {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	words := []string{"reading", "file", "src/main.go", "ok", "func", "error", "return", "the", "value", "checked", "TODO", "parse", "42", "=>"}
	var files []string
	for n := 0; n*20<<20 < total; n++ {
		path := filepath.Join(dir, fmt.Sprintf("%d.log", n))
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		written := 0
		for i := 0; written < 20<<20; i++ {
			var line string
			switch {
			case i%50 == 7:
				line = "\x1b[32mPASS\x1b[0m test " + words[rng.Intn(len(words))]
			case i%200 == 9:
				line = "progress 10%\rprogress 100%"
			default:
				for k := 4 + rng.Intn(10); k > 0; k-- {
					line += words[rng.Intn(len(words))] + " "
				}
			}
			if i == 100000 {
				line += " uses unsafe.Pointer here"
			}
			written += len(line) + 1
			fmt.Fprintln(w, line)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		files = append(files, path)
	}
	return files
}

// BenchmarkSearchVsGrep searches 200 MB of logs for a word in one line of
// each 20 MB file, as Scan and as `grep -rF` (and `grep -rFi` for the
// smart case's folding), best of 3 each in the same run, and reports
// the ratios (BENCHMARKS.md: the goal is at most 2).
func BenchmarkSearchVsGrep(b *testing.B) {
	if _, err := exec.LookPath("grep"); err != nil {
		b.Skip("no grep")
	}
	dir := b.TempDir()
	files := benchLogs(b, dir, 200<<20)
	best := func(f func()) time.Duration {
		var d time.Duration
		for i := 0; i < 3; i++ {
			t := time.Now()
			f()
			if e := time.Since(t); i == 0 || e < d {
				d = e
			}
		}
		return d
	}
	scan := func(query string) func() {
		p, err := Compile(query, false)
		if err != nil {
			b.Fatal(err)
		}
		return func() {
			hits := 0
			for _, path := range files {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Scan(context.Background(), f, func(Hit) bool { hits++; return true }); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if hits != len(files) {
				b.Fatalf("%d hits in %d files", hits, len(files))
			}
		}
	}
	grep := func(args ...string) func() {
		return func() {
			out, err := exec.Command("grep", append(args, dir)...).Output()
			if err != nil || len(out) == 0 {
				b.Fatalf("grep: %v", err)
			}
		}
	}
	for i := 0; i < b.N; i++ {
		g := best(grep("-rF", "unsafe.Pointer"))
		s := best(scan("unsafe.Pointer"))
		gi := best(grep("-rFi", "unsafe.pointer"))
		si := best(scan("unsafe.pointer"))
		b.ReportMetric(float64(s)/float64(g), "scan/grep")
		b.ReportMetric(float64(si)/float64(gi), "fold/grep-i")
		b.ReportMetric(float64(g.Milliseconds()), "grep-ms")
		b.ReportMetric(float64(s.Milliseconds()), "scan-ms")
	}
}

package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// BenchmarkNewWithRecords measures New (a host's start) on a state
// directory whose last run holds 1,000 agents of 5 submissions each,
// against none (BENCHMARKS.md, SPEC §10).
//
// SUBDASH_BENCH_RECORDS lists the numbers of records (default 0,1000).
//
//	go test -run '^$' -bench BenchmarkNewWithRecords -benchmem ./supervisor/
func BenchmarkNewWithRecords(b *testing.B) {
	for _, agents := range testkit.EnvInts(b, "SUBDASH_BENCH_RECORDS", "0,1000") {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			dir := b.TempDir()
			state := filepath.Join(dir, ".state")
			benchRecords(b, state, dir, agents, 5)
			cfg := Config{Command: "cat", MaxAgents: 4, Dir: dir, StateDir: state, Grace: time.Second,
				Scrollback: DefaultScrollback, Environ: os.Environ(), RestoreWindow: DefaultRestoreWindow, LogRetention: DefaultLogRetention}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if len(listOf(s)) != agents {
					b.Fatalf("restored %d", len(listOf(s)))
				}
				b.StopTimer()
				_ = s.Shutdown(context.Background())
				_ = os.RemoveAll(s.RunDir()) // the next start replays the same journal
				b.StartTimer()
			}
		})
	}
}

// benchRecords writes one earlier run of dir holding agents records of subs
// submissions each.
func benchRecords(b testing.TB, state, dir string, agents, subs int) {
	b.Helper()
	run := filepath.Join(state, "runs", "20261201T000000Z-bench0")
	if err := os.MkdirAll(run, 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(run, "journal.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(f)
	now := time.Now().Add(-time.Hour)
	_ = enc.Encode(journal.Event{Time: proto.Time{Time: now}, Event: "run_started", Dir: dir, PID: 1 << 22})
	out := "a typical answer of an agent, a few lines\nwith a result at the end"
	for i := 0; i < agents; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012d", i, i)
		r := &journal.AgentRecord{AgentID: id, Dir: dir, Status: proto.StatusCompleted, CreatedAt: proto.Time{Time: now}, UpdatedAt: proto.Time{Time: now},
			LastOutput: &out, Command: "cat", Runner: runner.Local, AgentPath: proto.JoinPath(proto.RootPath, id[:8])}
		for s := 1; s <= subs; s++ {
			sid := fmt.Sprintf("%08x-1111-4000-8000-%012d", i, s)
			log := filepath.Join(run, id, strconv.Itoa(s)+"-"+sid+".log")
			msg := fmt.Sprintf("task %d of agent %d: look at the parser and fix what the tests say", s, i)
			code := 0
			r.Submissions = append(r.Submissions, journal.SubmissionRecord{ID: sid, Seq: s, Message: msg, MessageBytes: len(msg),
				MessageFile: strings.TrimSuffix(log, ".log") + ".msg", Command: "cat", Log: log,
				StartedAt: proto.Time{Time: now}, EndedAt: proto.Time{Time: now}, Status: proto.StatusCompleted, ExitCode: &code})
			r.LastMessage = msg
		}
		_ = enc.Encode(journal.Event{Time: proto.Time{Time: now}, Event: "record", AgentID: id, Record: r})
	}
	if err := enc.Encode(journal.Event{Time: proto.Time{Time: now}, Event: "records_restored"}); err != nil {
		b.Fatal(err)
	}
	// The journal was written: a failed Close may mean lines lost.
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// BenchmarkRestoredHost (SPEC §10, BENCHMARKS.md): `subdash serve` started
// on a state directory holding 1,000 agents of 5 submissions each (a
// checkpoint journal, a log and a message file per submission), against
// the same with no agents, in the same run. Per start it reports the time
// from exec to the control socket accepting (it is bound before the
// records are read: a connection waits in its backlog), to the first
// `list` answered with every agent (what a user waits for), the CPU time
// the host took until then (cpu-first: less the machine's load than
// answer-ms is), the host's VmRSS then (rss-first) and after 20 more lists (each list of 10,000
// agents allocates tens of MB), and the time of `list` over the socket
// (median of 20).
//
// SUBDASH_BENCH_RECORDS lists the numbers of records (default 0,1000;
// BENCHMARKS.md's goal names the number its figures are taken at).
// SUBDASH_BENCH_VARIANTS names binaries to compare, started in turn in
// each iteration ("name=binary,VAR=value,…;name=…", an empty binary is
// this tree's; see TestBenchThousand): each figure is then reported per
// variant, prefixed with its name. Every start reads the same journal:
// the run a start wrote is removed before the next.
//
//	go test -run '^$' -bench BenchmarkRestoredHost -benchtime 10x .
func BenchmarkRestoredHost(b *testing.B) {
	variants := benchVariants(b)
	for _, agents := range testkit.EnvInts(b, "SUBDASH_BENCH_RECORDS", "0,1000") {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			base := b.TempDir()
			dir, state := filepath.Join(base, "work"), filepath.Join(base, "state")
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			writeRecords(b, state, dir, agents, 5)
			figs := map[string][]float64{}
			for i := 0; i < b.N; i++ {
				for _, v := range variants {
					prefix := ""
					if len(variants) > 1 {
						prefix = v.name + "-"
					}
					for k, f := range restoredStart(b, v, base, dir, state, agents) {
						figs[prefix+k] = append(figs[prefix+k], f)
					}
				}
			}
			for k, f := range figs {
				b.ReportMetric(median(f), k)
			}
		})
	}
}

// restoredStart starts variant v's serve once on state and returns its
// figures (see BenchmarkRestoredHost), then stops it and removes the run
// it wrote.
func restoredStart(b *testing.B, v benchVariant, base, dir, state string, agents int) map[string]float64 {
	b.Helper()
	socket := filepath.Join(base, "s.sock")
	cmd := exec.Command(v.bin, "serve", "--command", "cat", "--dir", dir, "--state-dir", state, "--socket", socket)
	cmd.Env = append(testEnv(), v.env...)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	for {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close() //nolint:errcheck // a probe that sent nothing: its Close cannot lose data
			break
		}
		if time.Since(t0) > 20*time.Second {
			b.Fatal("serve did not listen")
		}
		time.Sleep(time.Millisecond)
	}
	out := map[string]float64{"startup-ms": float64(time.Since(t0).Microseconds()) / 1000}
	c := client.NewClient(socket, dir)
	if ls, err := c.List(context.Background()); err != nil || len(ls.Agents) != agents {
		b.Fatalf("first list: %d agents, %v", len(ls.Agents), err)
	}
	out["answer-ms"] = float64(time.Since(t0).Microseconds()) / 1000
	out["rss-first-MiB"] = float64(rssKiB(cmd.Process.Pid)) / 1024
	out["cpu-first-ms"] = float64(cpuTicks(cmd.Process.Pid)) * 10
	var each []float64
	for j := 0; j < 20; j++ {
		l0 := time.Now()
		ls, err := c.List(context.Background())
		if err != nil || len(ls.Agents) != agents {
			b.Fatalf("list: %d agents, %v", len(ls.Agents), err)
		}
		each = append(each, float64(time.Since(l0).Microseconds())/1000)
	}
	out["list-ms"] = median(each)
	kib := rssKiB(cmd.Process.Pid)
	if kib == 0 {
		b.Fatal("no VmRSS")
	}
	out["rss-MiB"] = float64(kib) / 1024
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	runs, err := os.ReadDir(filepath.Join(state, "runs"))
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range runs {
		if r.Name() != benchRun {
			if err := os.RemoveAll(filepath.Join(state, "runs", r.Name())); err != nil {
				b.Fatal(err)
			}
		}
	}
	return out
}

// benchRun is the run writeRecords writes.
const benchRun = "20261201T000000Z-bench0"

// writeRecords writes a state directory with one earlier run of dir that
// holds agents records of subs submissions each, as a host writes them.
func writeRecords(b *testing.B, state, dir string, agents, subs int) {
	b.Helper()
	run := filepath.Join(state, "runs", benchRun)
	if err := os.MkdirAll(run, 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(run, "journal.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(f)
	now := time.Now().Add(-time.Hour)
	_ = enc.Encode(journalLine{Time: proto.Time{Time: now}, Event: "run_started", Dir: dir, PID: 1 << 22})
	out := "a typical answer of an agent, a few lines\nwith a result at the end"
	for i := 0; i < agents; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012d", i, i)
		r := &recordLine{AgentID: id, Dir: dir, Status: proto.StatusCompleted,
			CreatedAt: proto.Time{Time: now}, UpdatedAt: proto.Time{Time: now}, LastOutput: &out,
			Command: "cat", Runner: "local", AgentPath: "/root/" + id[:8]}
		for s := 1; s <= subs; s++ {
			sid := fmt.Sprintf("%08x-1111-4000-8000-%012d", i, s)
			log := filepath.Join(run, id, strconv.Itoa(s)+"-"+sid+".log")
			msg := fmt.Sprintf("task %d of agent %d: look at the parser and fix what the tests say", s, i)
			if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(log, []byte(strings.Repeat(out+"\n", 20)), 0o600); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(strings.TrimSuffix(log, ".log")+".msg", []byte(msg), 0o600); err != nil {
				b.Fatal(err)
			}
			code := 0
			r.Submissions = append(r.Submissions, submissionLine{ID: sid, Seq: s, Message: msg,
				MessageBytes: len(msg), MessageFile: strings.TrimSuffix(log, ".log") + ".msg", Command: "cat", Log: log,
				StartedAt: proto.Time{Time: now}, EndedAt: proto.Time{Time: now}, Status: proto.StatusCompleted, ExitCode: &code})
			r.LastMessage = msg
		}
		_ = enc.Encode(journalLine{Time: proto.Time{Time: now}, Event: "record", AgentID: id, Record: r})
	}
	if err := enc.Encode(journalLine{Time: proto.Time{Time: now}, Event: "records_restored"}); err != nil {
		b.Fatal(err)
	}
	// The journal was written: a failed Close may mean lines lost.
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// journalLine, recordLine and submissionLine are a journal's lines as a
// host writes them (SPEC §10), with the fields a completed agent's
// checkpoint has, in the same order: the types are the engine's own
// (supervisor/internal/journal), which tests of the binary do not import.
type journalLine struct {
	Time    proto.Time  `json:"time"`
	Event   string      `json:"event"`
	AgentID string      `json:"agent_id,omitempty"`
	PID     int         `json:"pid,omitempty"`
	Dir     string      `json:"dir,omitempty"`
	Record  *recordLine `json:"record,omitempty"`
}

type recordLine struct {
	AgentID     string           `json:"agent_id"`
	Dir         string           `json:"dir"`
	Status      proto.Status     `json:"status"`
	CreatedAt   proto.Time       `json:"created_at"`
	UpdatedAt   proto.Time       `json:"updated_at"`
	LastMessage string           `json:"last_message"`
	LastOutput  *string          `json:"last_output,omitempty"`
	Command     string           `json:"command,omitempty"`
	Runner      string           `json:"runner,omitempty"`
	Usage       proto.Usage      `json:"usage"`
	Submissions []submissionLine `json:"submissions"`
	AgentPath   string           `json:"agent_path,omitempty"`
}

type submissionLine struct {
	ID           string       `json:"id"`
	Seq          int          `json:"seq"`
	Message      string       `json:"message"`
	MessageBytes int          `json:"message_bytes"`
	MessageFile  string       `json:"message_file,omitempty"`
	Command      string       `json:"command,omitempty"`
	Log          string       `json:"log,omitempty"`
	StartedAt    proto.Time   `json:"started_at"`
	EndedAt      proto.Time   `json:"ended_at"`
	Status       proto.Status `json:"status"`
	ExitCode     *int         `json:"exit_code,omitempty"`
}

// median returns the middle of v (the upper one of an even count).
func median[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

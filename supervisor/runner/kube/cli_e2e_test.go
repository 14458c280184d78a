package kube

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// The real agent CLIs in pods: claude's questions and codex's app-server
// (SPEC §12, §8, §13). Besides a cluster (testCluster) they need an image
// with the CLIs, SUBDASH_KUBE_TEST_CLI_IMAGE (testdata/mkcliimage.sh builds
// localhost/agentclis:local for the test cluster from AGENTCLI_ROOT), the
// fake model servers of ../shared/tools/agent-clis, and an address of this
// machine that the pods reach, SUBDASH_KUBE_TEST_HOST_ADDR (default: the
// test cluster's bridge, k8stest0); each is skipped, saying which is
// missing, without them.

// cliCluster skips t unless a cluster, an image with the agent CLIs and a
// way from the pods to this machine are there; it returns the image, the
// node and the address.
func cliCluster(t *testing.T) (image, node, addr string) {
	t.Helper()
	_, node = testCluster(t)
	image = os.Getenv("SUBDASH_KUBE_TEST_CLI_IMAGE")
	if image == "" {
		t.Skip("SUBDASH_KUBE_TEST_CLI_IMAGE is not set: these tests need an image with claude and codex (testdata/mkcliimage.sh builds one for the test cluster)")
	}
	addr = os.Getenv("SUBDASH_KUBE_TEST_HOST_ADDR")
	if addr == "" {
		if ifc, err := net.InterfaceByName("k8stest0"); err == nil {
			as, _ := ifc.Addrs()
			for _, a := range as {
				if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
					addr = n.IP.String()
				}
			}
		}
	}
	if addr == "" {
		t.Skip("no address of this machine that the pods reach: set SUBDASH_KUBE_TEST_HOST_ADDR")
	}
	return image, node, addr
}

// podStub starts the fake model server script (../shared/tools/agent-clis)
// on this machine and a relay to it at addr, where the pods reach it; it
// returns the relay's host:port. Both end with the test.
func podStub(t *testing.T, script, addr string) string {
	t.Helper()
	dir := os.Getenv("AGENTCLI_STUBS")
	for _, d := range []string{"../../../../shared/tools/agent-clis", "../../../../../shared/tools/agent-clis"} {
		if _, err := os.Stat(filepath.Join(d, script)); dir == "" && err == nil {
			dir = d
		}
	}
	if dir == "" {
		t.Skipf("the fake model server %s is not found: set AGENTCLI_STUBS to ../shared/tools/agent-clis", script)
	}
	portFile := filepath.Join(t.TempDir(), "port")
	cmd := exec.Command("python3", filepath.Join(dir, script), "--port", "0", "--port-file", portFile)
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start the fake model server: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	port := testkit.Poll(t, 10*time.Second, script+" to write its port", func() (string, bool) {
		b, _ := os.ReadFile(portFile)
		return strings.TrimSpace(string(b)), len(b) > 0
	})
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close() //nolint:errcheck // a relayed connection: the peers see its end
				s, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
				if err != nil {
					return
				}
				defer s.Close() //nolint:errcheck // as above
				go func() { _, _ = io.Copy(s, c); _ = s.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
	return l.Addr().String()
}

// presetHost starts a host of the state directory state running preset
// (with args) in pods of image, with the variables env set here and
// copied into the pods (--kube-env), and ends it when the test ends.
func presetHost(t *testing.T, state, preset, args, image, node string, env map[string]string) *supervisor.Supervisor {
	t.Helper()
	cfg := hostConfig(state, "", image, node, 2*time.Second)
	cfg.RestoreWindow = supervisor.DefaultRestoreWindow
	for k, v := range env {
		t.Setenv(k, v)
		cfg.Kube.Env = append(cfg.Kube.Env, k)
	}
	p, err := supervisor.LookupPreset(preset, args, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Preset, cfg.Command, cfg.CommandSource = p, p.Describe(), supervisor.SourcePreset
	s, err := supervisor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// waitNow polls until agent id's NOW (SPEC §7) holds want.
func waitNow(t *testing.T, s *supervisor.Supervisor, id, want string) {
	t.Helper()
	testkit.Poll(t, 2*time.Minute, "agent "+id[:8]+" to say "+want, func() (string, bool) {
		l, _ := s.List(context.Background())
		for _, a := range l.Agents {
			if a.AgentID == id {
				if a.Status != proto.StatusRunning {
					t.Fatalf("agent %s ended (%s) before %q", id[:8], a.Status, want)
				}
				return a.Now, strings.Contains(a.Now, want)
			}
		}
		return "", false
	})
}

// TestClaudeQuestionsInAPod (SPEC §12 "Questions", §13): the real claude
// in a pod asks its question through the exec stream; the answer goes back
// down its stdin and the model reads it. A question still pending when the
// agent is interrupted is denied and nothing of the submission is left in
// the pod. A permission request without --approvals is denied in claude's
// own words, worded with the pod's working directory.
func TestClaudeQuestionsInAPod(t *testing.T) {
	image, node, addr := cliCluster(t)
	stub := podStub(t, "fake_anthropic.py", addr)
	env := map[string]string{
		"ANTHROPIC_BASE_URL": "http://" + stub, "ANTHROPIC_API_KEY": "dummy", "DISABLE_TELEMETRY": "1",
		"DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_MAX_RETRIES": "1",
	}
	state := t.TempDir()
	s := presetHost(t, state, "claude", "", image, node, env)
	ask := `CALL_TOOL: AskUserQuestion {"questions":[{"question":"Which DB?","header":"DB","multiSelect":false,"options":[{"label":"Postgres","description":"pg"},{"label":"SQLite","description":"lite"}]}]}`
	sp, err := s.Spawn(t.Context(), ask)
	if err != nil {
		t.Fatal(err)
	}
	id := sp.AgentID
	waitNow(t, s, id, "asks: DB: Which DB? [Postgres / SQLite]")
	if _, err := s.Answer(t.Context(), id, "", map[string][]string{"Which DB?": {"SQLite"}}); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || !strings.Contains(str(d.LastOutput), `"Which DB?"="SQLite"`) {
		t.Fatalf("after the answer: %s %q %q", d.Status, str(d.LastOutput), str(d.LastError))
	}

	if _, err := s.Send(t.Context(), id, ask, false); err != nil {
		t.Fatal(err)
	}
	waitNow(t, s, id, "asks: DB")
	sub := latest(t, s, id)
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if info, _ := s.Agent(id); info.Status != proto.StatusErrored || str(info.LastError) != "interrupted" || len(info.PendingQuestions) != 0 {
		t.Fatalf("after the interrupt: %s %q, pending %+v", info.Status, str(info.LastError), info.PendingQuestions)
	}
	if n := leftInPod(t, s, id, sub.ID); n != 0 {
		t.Fatalf("%d process(es) of the interrupted submission left in the pod", n)
	}
	if _, err := s.Answer(t.Context(), id, "", map[string][]string{"": {"SQLite"}}); err == nil {
		t.Fatal("an answer after the interrupt was taken")
	}

	if _, err := s.Send(t.Context(), id, "RUN_BASH: touch inside.txt", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	var raw strings.Builder
	if err := s.WriteLogs(t.Context(), &raw, id, 0, true); err != nil {
		t.Fatal(err)
	}
	w, _, err := s.Transcript(t.Context(), id, 0, 0, proto.MaxWindowItems)
	if err != nil {
		t.Fatal(err)
	}
	denied := ""
	for _, e := range w.Entries {
		if text, ok := strings.CutPrefix(e.Text, "denied without --approvals: "); ok {
			denied = text
		}
	}
	if !strings.HasPrefix(denied, "touch in '") || !strings.Contains(denied, "needs approval. The path is inside the working directories for this session") ||
		!strings.Contains(raw.String(), `"content":"`+denied+`"`) {
		t.Fatalf("the denial %q is not what claude's model read:\n%s", denied, raw.String())
	}

	// A host that quits while its agent asks denies the question and ends
	// the submission; the next host's records keep both questions.
	if _, err := s.Send(t.Context(), id, ask, false); err != nil {
		t.Fatal(err)
	}
	waitNow(t, s, id, "asks: DB")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := presetHost(t, state, "claude", "", image, node, env)
	info, _ := s2.Agent(id)
	if len(info.Submissions) != 4 || info.Status != proto.StatusErrored || str(info.LastError) != "interrupted" {
		t.Fatalf("restored: %d submissions, %s %q; want 4, errored, interrupted", len(info.Submissions), info.Status, str(info.LastError))
	}
	for seq, want := range map[int]string{1: `answered: "Which DB?"="SQLite"`, 2: "denied: interrupted", 4: "denied: interrupted"} {
		w, _, err := s2.Transcript(t.Context(), id, seq, 0, proto.MaxWindowItems)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i, e := range w.Entries {
			if e.Kind == transcript.KindQuestion && i+1 < len(w.Entries) {
				got = w.Entries[i+1].Text
			}
		}
		if got != want {
			t.Errorf("restored submission %d: %q after its question; want %q", seq, got, want)
		}
	}
}

// TestCodexAppServerInAPod (SPEC §8, §11, §13): codex's app-server in a
// pod takes a steer while its turn's command runs, and an interrupt ends
// the turn and the command with it (turn/interrupt, then stdin closed:
// the app-server ends its commands, the sandboxed ones die with bwrap's
// pid namespace, and the runner terminates whatever of the submission is
// left); the steer, not taken, is queued. A close does the same and keeps
// the agent's pod, so the agent resumed continues its thread there.
func TestCodexAppServerInAPod(t *testing.T) {
	image, node, addr := cliCluster(t)
	stub := podStub(t, "fake_openai.py", addr)
	args := `-c model=gpt-5.5 -c model_provider=stub -c 'model_providers.stub={name="stub",base_url="http://` + stub +
		`/v1",wire_api="responses",env_key="STUB_OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}' ` +
		`-c check_for_update_on_startup=false -c analytics.enabled=false -c features.plugins=false -c features.daemon_auto_start=false`
	s := presetHost(t, t.TempDir(), "codex", args, image, node, map[string]string{"STUB_OPENAI_API_KEY": "dummy"})

	sp, err := s.Spawn(t.Context(), "RUN_SHELL: sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	id := sp.AgentID
	waitNow(t, s, id, "sleep 300")
	sub := latest(t, s, id)
	if n := leftInPod(t, s, id, sub.ID); n < 2 {
		t.Fatalf("%d process(es) of the submission in the pod while its command runs; want the app-server and the command", n)
	}
	st, err := s.Steer(t.Context(), id, "also count to three")
	if err != nil || st.Receipt != proto.ReceiptPending {
		t.Fatalf("steer: %+v %v", st, err)
	}
	start := time.Now()
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	info, _ := s.Agent(id)
	if info.Status != proto.StatusErrored || str(info.LastError) != "interrupted" {
		t.Fatalf("after the interrupt: %s %q", info.Status, str(info.LastError))
	}
	if n := leftInPod(t, s, id, sub.ID); n != 0 {
		t.Fatalf("%d process(es) of the interrupted turn left in the pod", n)
	}
	if len(info.SteeredMessages) != 1 || info.SteeredMessages[0].Receipt != proto.ReceiptNotDelivered || len(info.QueuedMessages) != 1 {
		t.Fatalf("the steer of the interrupted turn: %+v, queued %v; want not_delivered and queued", info.SteeredMessages, info.QueuedMessages)
	}
	t.Logf("interrupt with the command running: %s", took)

	if _, err := s.Send(t.Context(), id, "RUN_SHELL: sleep 300", false); err != nil {
		t.Fatal(err)
	}
	waitNow(t, s, id, "sleep 300")
	sub = latest(t, s, id)
	pod := info.Pod
	if _, err := s.Close(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if n := leftInPod(t, s, id, sub.ID); n != 0 {
		t.Fatalf("%d process(es) of the closed agent's turn left in the pod", n)
	}
	if _, err := s.Resume(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(t.Context(), id, "say hi", false); err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, id)
	info, _ = s.Agent(id)
	if d.Status != proto.StatusCompleted || info.Pod != pod || !strings.Contains(str(d.LastOutput), "last user text: 'say hi'") {
		t.Fatalf("after close and resume: %s %q in pod %s (was %s)", d.Status, str(d.LastOutput), info.Pod, pod)
	}
}

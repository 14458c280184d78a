package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"

	// Imported for the build graph only: `go test ./...` then compiles
	// supervisor/runner/kube and client-go (race-instrumented under -race) before
	// this package's test binary, once for both packages, so that the
	// `go build -tags kube` below finds every package in the build cache
	// and only compiles and links package main, instead of compiling
	// client-go a second time next to the suite's own compile on a cold
	// cache. This test binary links client-go without using it.
	_ "github.com/subdash/subdash/supervisor/runner/kube"
)

var (
	kubeBinOnce sync.Once
	kubeBin     string
	kubeBinErr  error
)

// kubeBinary builds the binary with the Kubernetes runner (`-tags kube`,
// main_kube.go) once per test run, so that the README's test command
// compiles and tests what a user builds with README's `go build -tags
// kube`. It builds with -race exactly when this test binary was, so every
// package but main comes from the build cache the suite just filled (see
// the import above); a different mode would recompile client-go (about
// 2,000 files).
func kubeBinary(t *testing.T) string {
	t.Helper()
	kubeBinOnce.Do(func() {
		dir := filepath.Dir(binPath)
		kubeBin = filepath.Join(dir, "subdash-kube")
		args := []string{"build", "-tags", "kube", "-o", kubeBin}
		if raceBuild {
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, ".")...)
		build.Dir = repoRoot
		out, err := build.CombinedOutput()
		if err != nil {
			kubeBinErr = err
			kubeBin = string(out)
		}
	})
	if kubeBinErr != nil {
		t.Fatalf("go build -tags kube: %v\n%s", kubeBinErr, kubeBin)
	}
	return kubeBin
}

// runBinary runs bin with args and env (added to testEnv without
// KUBECONFIG) and returns its exit code and stderr.
func runBinary(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range testEnv() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "KUBERNETES_SERVICE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("%s: %v", bin, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestKubernetesRunnerAtStart: what a user sees when `--runner kubernetes`
// cannot work, from the binary built with and without the runner (SPEC
// §13: a missing --kube-image, no cluster configuration and an unreachable
// cluster are errors at start, not at the first spawn). The host never
// listens in these cases.
func TestKubernetesRunnerAtStart(t *testing.T) {
	kube := kubeBinary(t)
	w := newWorkspace(t)
	unreachable := filepath.Join(w.base, "unreachable.kubeconfig")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := append([]string{"serve", "--command", "cat"}, w.flags()...)
	cases := []struct {
		name, bin string
		env, args []string
		want      string
	}{
		{"default binary", binPath, nil, []string{"--runner", "kubernetes", "--kube-image", "busybox"},
			"this subdash binary was built without the Kubernetes runner; build it with `go build -tags kube`"},
		{"no --kube-image", kube, []string{"KUBECONFIG=" + unreachable}, []string{"--runner", "kubernetes"},
			"--runner kubernetes needs --kube-image IMAGE"},
		{"no configuration", kube, []string{"HOME=" + w.base}, []string{"--runner", "kubernetes", "--kube-image", "busybox"},
			"--runner kubernetes: no cluster configuration"},
		{"KUBECONFIG names no file", kube, []string{"KUBECONFIG=" + filepath.Join(w.base, "missing")}, []string{"--runner", "kubernetes", "--kube-image", "busybox"},
			"KUBECONFIG=" + filepath.Join(w.base, "missing") + " names no kubeconfig file that exists"},
		{"unreachable cluster", kube, []string{"KUBECONFIG=" + unreachable}, []string{"--runner", "kubernetes", "--kube-image", "busybox"},
			"--runner kubernetes: cannot reach the cluster at https://127.0.0.1:1"},
		{"--kube-* without the runner", kube, nil, []string{"--kube-image", "busybox"},
			"--kube-* flags need --runner kubernetes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := runBinary(t, c.bin, c.env, append(serve, c.args...)...)
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit code %d, stderr %q; want a failure saying %q", code, stderr, c.want)
			}
			if _, err := os.Stat(w.socket); err == nil {
				t.Fatalf("the host listened on %s although it could not start", w.socket)
			}
		})
	}
}

// TestKubernetesBinaryRunsLocally: the binary with the runner is otherwise
// the same program: as a local host it runs a submission that `subdash ctl`
// spawns and waits for.
func TestKubernetesBinaryRunsLocally(t *testing.T) {
	kube := kubeBinary(t)
	w := newWorkspace(t)
	cmd := exec.Command(kube, append([]string{"serve", "--command", e2eCommand}, w.flags()...)...)
	cmd.Env = testEnv()
	waitListening(t, startCmd(t, cmd), w.socket)
	var a proto.SpawnResult
	ctlOK(t, w, &a, "spawn", "hello")
	var res proto.WaitResult
	ctlOK(t, w, &res, "wait", a.AgentID, "--timeout-ms", "30000")
	if d := res.Details[a.AgentID]; d.Status != proto.StatusCompleted || d.LastOutput == nil || *d.LastOutput != "got: hello" {
		t.Fatalf("wait: %+v; want completed with \"got: hello\"", d)
	}
}

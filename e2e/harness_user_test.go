package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// nobody is the uid (and gid) of the other user in the tests that need
// one: Debian's nobody and nogroup.
const nobody = 65534

// helperEnv makes this test binary a helper process instead of the tests:
// its value is the helper's arguments, a JSON array (runHelper). The tests
// run it as another user (asNobody) to be the process at the other end of
// a socket.
const helperEnv = "SUBDASH_E2E_HELPER"

// helperArgs returns the helper's arguments when this process is one.
func helperArgs() ([]string, bool) {
	v, ok := os.LookupEnv(helperEnv)
	if !ok {
		return nil, false
	}
	var args []string
	if err := json.Unmarshal([]byte(v), &args); err != nil || len(args) == 0 {
		return []string{"bad " + helperEnv + ": " + v}, true
	}
	return args, true
}

// runHelper runs a helper process and returns its exit status:
//
//   - serve SOCKET: an HTTP server on a Unix socket of its own (mode 0777),
//     such as another user could run where a client looks for subdash.
//     It prints "listening", then "accepted" for each connection in the
//     order it accepts them, and "request METHOD PATH BODY" (BODY quoted)
//     for each request before it answers a forged spawn result.
//   - post SOCKET PATH BODY: one POST to a socket, printing the answer's
//     status line and body.
func runHelper(args []string) int {
	switch {
	case args[0] == "serve" && len(args) == 2:
		return helperServe(args[1])
	case args[0] == "post" && len(args) == 4:
		return helperPost(args[1], args[2], args[3])
	}
	fmt.Fprintf(os.Stderr, "helper: unknown arguments %q\n", args)
	return 2
}

// helperServe is runHelper's serve.
func helperServe(path string) int {
	ln, err := net.Listen("unix", path)
	if err == nil {
		err = os.Chmod(path, 0o777)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	srv := &http.Server{
		// StateNew is reported in the accept loop, so in accept order.
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				say("accepted")
			}
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			say("request %s %s %q", r.Method, r.URL.Path, body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"agent_id":"forged","agent_path":"/root/forged","status":"completed","task_name":"forged"}`)
		}),
	}
	say("listening")
	_ = srv.Serve(ln)
	return 1
}

// helperPost is runHelper's post.
func helperPost(path, urlPath, body string) int {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}, Timeout: 10 * time.Second}
	resp, err := hc.Post("http://subdash"+urlPath, "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: its Close cannot lose data
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s %s\n", resp.Status, b)
	return 0
}

// requireRoot skips a test that needs root to be another user, saying why.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to run a process as another user (uid %d)", nobody)
	}
}

// helperBinary is a copy of this test binary that uid nobody may run,
// removed at the test's end.
func helperBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "subdash-helper-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "helper")
	copyFile(t, self, bin)
	return bin
}

// asNobody returns cmd run as uid nobody, in /, with a bare environment
// and env added.
func asNobody(cmd *exec.Cmd, env ...string) *exec.Cmd {
	cmd.Dir = "/"
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	return cmd
}

// otherServer is runHelper's serve run as uid nobody: what it printed so
// far is in out.
type otherServer struct {
	socket string
	pid    int
	out    *testkit.SyncBuffer
}

// serveAsNobody starts an HTTP server of uid nobody on socket (its folder
// must let nobody create it) and waits until it listens; it is killed at
// the test's end.
func serveAsNobody(t *testing.T, bin, socket string) *otherServer {
	t.Helper()
	args, _ := json.Marshal([]string{"serve", socket})
	cmd := asNobody(exec.Command(bin), helperEnv+"="+string(args))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &otherServer{socket: socket, pid: cmd.Process.Pid, out: &testkit.SyncBuffer{}}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(s.out, stdout)
		close(copied)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-copied
		_ = cmd.Wait()
	})
	testkit.Eventually(t, dashWait, "uid nobody's server to listen on "+socket, func() bool {
		if strings.Contains(stderr.String(), "helper:") {
			t.Fatalf("uid nobody's server: %s", stderr.String())
		}
		return strings.Contains(s.out.String(), "listening\n")
	})
	return s
}

// settle makes one request of its own to the server and waits for it:
// since it is accepted after every connection made before, what the
// server printed then includes all of them. It returns the server's
// lines before it.
func (s *otherServer) settle(t *testing.T) []string {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", s.socket)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://subdash/settle")
	if err != nil {
		t.Fatalf("the test's own request to uid nobody's server: %v", err)
	}
	_ = resp.Body.Close()
	out := testkit.Poll(t, dashWait, "uid nobody's server to print the test's own request", func() (string, bool) {
		out := s.out.String()
		return out, strings.Contains(out, "request GET /settle ")
	})
	var lines []string
	own := -1 // the test's own connection, accepted last
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "request GET /settle "):
			return append(lines[:own], lines[own+1:]...)
		case line == "accepted":
			own = len(lines)
			lines = append(lines, line)
		case line != "listening":
			lines = append(lines, line)
		}
	}
	return lines
}

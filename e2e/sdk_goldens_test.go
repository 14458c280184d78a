package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

// sdkModule is the MCP Go SDK whose server conformance files
// (mcp/testdata/conformance/server/*.txtar) TestGoSDKConformance replays:
// the version go.mod requires, read from the module cache.
const sdkModule = "github.com/modelcontextprotocol/go-sdk"

// sdkGolden says how one of the SDK's conformance files applies to
// subdash mcp: replayed whole, up to a client message, or not at all.
type sdkGolden struct {
	// upTo is how many of the client's messages are sent (0: all); the
	// answers to them are compared.
	upTo int
	// skip, when set, says why the file does not apply.
	skip string
	// deviations are the answers, by id, where subdash answers otherwise
	// on purpose: the answer it gives instead and why.
	deviations map[string]sdkDeviation
}

// sdkDeviation is an answer that differs from the SDK's golden on purpose.
type sdkDeviation struct {
	answer string // the whole message subdash writes instead
	why    string
}

// fixtureOnly is why a file that needs the SDK's own test server does not
// apply: its prompts, resources or tools are not subdash's.
const fixtureOnly = "it exercises the SDK test server's own %s, which subdash does not have"

// sdkGoldens is every server conformance file of the SDK version go.mod
// requires; a file not named here fails the test, so that an SDK upgrade
// brings its new files to a decision.
var sdkGoldens = map[string]sdkGolden{
	"bad_requests.txtar":   {},
	"lifecycle.txtar":      {},
	"version-latest.txtar": {},
	"version-older.txtar":  {},
	"discover.txtar":       {},
	// The first six client messages (initialize to a tools/call without
	// params) ask nothing of the SDK's test tools; the rest call them.
	"tools.txtar": {upTo: 6, deviations: map[string]sdkDeviation{
		"3": {`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: \"resources/list\""}}`,
			"subdash declares no resources, so resources/list is a method it does not have (-32601, as the MCP conformance suite's server-stateless asks); the SDK's test server answers an empty list"},
		"4": {`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: \"prompts/list\""}}`,
			"subdash declares no prompts: as for resources/list (server-stateless's declares-prompts-in-discover)"},
	}},
	"prompts.txtar":                          {skip: fmt.Sprintf(fixtureOnly, "prompts")},
	"resources.txtar":                        {skip: fmt.Sprintf(fixtureOnly, "resources")},
	"mrtr.txtar":                             {skip: fmt.Sprintf(fixtureOnly, "tool confirmThenGreet (an elicitation round trip)")},
	"spec-sep-973-additional-metadata.txtar": {skip: fmt.Sprintf(fixtureOnly, "icons and website on its implementation, tools, prompts and resources")},
}

// TestGoSDKConformance replays the MCP Go SDK's server conformance files
// (JSON-RPC exchanges the SDK's own server must produce) through `subdash
// mcp` over stdio, a fresh server for each file, as the SDK's
// TestServerConformance does: each client message in turn, waiting for
// the answer to each request. Every server message is compared with the
// golden, field by field, but for what is subdash's own: the server's
// name and version (serverInfo), its capabilities and its tool list.
// Where subdash answers otherwise on purpose, the golden's answer is
// replaced by the one subdash gives, with the reason (sdkGoldens).
func TestGoSDKConformance(t *testing.T) {
	dir := sdkConformanceDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files in %s (%v)", dir, err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".txtar"), func(t *testing.T) {
			g, known := sdkGoldens[name]
			switch {
			case !known:
				t.Fatalf("%s is new in this SDK version: say in sdkGoldens whether it applies to subdash mcp", path)
			case g.skip != "":
				t.Skipf("%s does not apply: %s", name, g.skip)
			}
			t.Parallel()
			client, server := loadGolden(t, path, g)
			got := replayGolden(t, client)
			if len(got) != len(server) {
				t.Errorf("%d server messages, want %d:\n%s", len(got), len(server), strings.Join(got, "\n"))
			}
			for i := range min(len(got), len(server)) {
				if d := compareGolden(t, server[i], got[i]); d != "" {
					t.Errorf("server message %d: %s\n got: %s\nwant: %s", i+1, d, got[i], server[i])
				}
			}
		})
	}
}

// sdkConformanceDir is the SDK's server conformance folder in the module
// cache, for the version go.mod requires.
func sdkConformanceDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", sdkModule)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" {
		t.Fatalf("go list -m %s: %v %q (run go mod download)", sdkModule, err, out)
	}
	return filepath.Join(mod, "mcp", "testdata", "conformance", "server")
}

// loadGolden reads a conformance file: the client's messages to send and
// the server's expected messages, each as compact JSON, with g applied.
func loadGolden(t *testing.T, path string, g sdkGolden) (client, server []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range txtar.Parse(data).Files {
		switch f.Name {
		case "client":
			client = jsonMessages(t, path, f.Data)
		case "server":
			server = jsonMessages(t, path, f.Data)
		}
	}
	if g.upTo > 0 {
		if g.upTo > len(client) {
			t.Fatalf("%s has %d client messages; sdkGoldens replays %d", path, len(client), g.upTo)
		}
		client = client[:g.upTo]
		// The answers kept are those to the requests sent, in order.
		var ids []string
		for _, m := range client {
			if id := messageID(m); id != "" && messageMethod(m) != "" {
				ids = append(ids, id)
			}
		}
		var kept []string
		for _, m := range server {
			if len(kept) < len(ids) && messageID(m) == ids[len(kept)] && messageMethod(m) == "" {
				kept = append(kept, m)
			}
		}
		server = kept
	}
	for id, d := range g.deviations {
		i := slices.IndexFunc(server, func(m string) bool { return messageID(m) == id && messageMethod(m) == "" })
		if i < 0 {
			t.Fatalf("%s: no answer to id %s to deviate from", path, id)
		}
		t.Logf("id %s deviates on purpose: %s", id, d.why)
		server[i] = compactJSON(t, []byte(d.answer))
	}
	return client, server
}

// jsonMessages splits a file section into its JSON values, compacted.
func jsonMessages(t *testing.T, path string, data []byte) []string {
	t.Helper()
	var out []string
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, compactJSON(t, raw))
	}
	return out
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return b.String()
}

// messageID is a message's id as JSON ("" when it has none); messageMethod
// its method ("" for an answer).
func messageID(m string) string {
	var v struct{ ID json.RawMessage }
	_ = json.Unmarshal([]byte(m), &v)
	return string(v.ID)
}

func messageMethod(m string) string {
	var v struct{ Method string }
	_ = json.Unmarshal([]byte(m), &v)
	return v.Method
}

// replayGolden starts `subdash mcp` in a workspace of its own, writes the
// client's messages one by one, waiting after each request for its
// answer, then closes stdin and returns every message the server wrote
// until it exited.
func replayGolden(t *testing.T, client []string) []string {
	t.Helper()
	w := newWorkspace(t)
	cmd, stdin, stdout, stderr := startMCPPipe(t, append([]string{"--command", e2eCommand}, w.flags()...))
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	for _, m := range client {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			t.Fatalf("writing %s: %v; stderr:\n%s", m, err, stderr)
		}
		if messageMethod(m) == "" || messageID(m) == "" {
			continue // a notification, or an answer to the server: nothing comes back
		}
		for answered := false; !answered; {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("subdash mcp ended before answering %s; stderr:\n%s", m, stderr)
				}
				got = append(got, l)
				answered = messageID(l) == messageID(m) && messageMethod(l) == ""
			case <-time.After(30 * time.Second):
				t.Fatalf("no answer to %s within 30 s; stderr:\n%s", m, stderr)
			}
		}
	}
	stdin.Close() //nolint:errcheck // the client leaves: what the server writes until its exit is read
	for l := range lines {
		got = append(got, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("subdash mcp exited with %v; stderr:\n%s", err, stderr)
	}
	return got
}

// compareGolden compares a server message with the golden's and says how
// they differ ("" when they do not), leaving out what is subdash's own:
// serverInfo (also under _meta) but that it names subdash, capabilities,
// and the tools of a tools/list answer.
func compareGolden(t *testing.T, want, got string) string {
	t.Helper()
	var w, g map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Sprintf("not JSON: %v", err)
	}
	for i, m := range []map[string]any{w, g} {
		res, _ := m["result"].(map[string]any)
		if res == nil {
			continue
		}
		meta, _ := res["_meta"].(map[string]any)
		for _, info := range []any{res["serverInfo"], meta["io.modelcontextprotocol/serverInfo"]} {
			if info, ok := info.(map[string]any); ok && i == 1 && (info["name"] != "subdash" || info["version"] == "") {
				return fmt.Sprintf("serverInfo %v does not name subdash", info)
			}
		}
		delete(res, "serverInfo")
		delete(meta, "io.modelcontextprotocol/serverInfo")
		delete(res, "capabilities")
		if _, ok := res["tools"].([]any); ok {
			res["tools"] = "(subdash's own)"
		}
	}
	if !reflect.DeepEqual(w, g) {
		return "differs"
	}
	return ""
}

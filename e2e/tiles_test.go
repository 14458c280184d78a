package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// The tiles (SPEC §7 "Tiles", v): the running agents' live output side
// by side, on the host's dashboard and on viewers.

// tileCount counts the tiles on screen s: their top-left corners.
func tileCount(s string) int { return strings.Count(s, "╭─ ") + strings.Count(s, "┏━ ") }

// checkTiles checks that the tiles fill the main area of screen s: each
// line exactly the terminal's width, starting with a tile's border.
func (d *dash) checkTiles(s string) {
	d.t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) < d.h {
		d.t.Fatalf("screen has %d lines, want %d:\n%s", len(lines), d.h, s)
	}
	for i := range d.h - 3 {
		r := []rune(lines[i])
		if len(r) != d.w || !strings.ContainsRune("╭╰│┏┗┃", r[0]) {
			d.t.Fatalf("line %d (%d cells) is not a row of tiles %d wide:\n%s", i, len(r), d.w, s)
		}
	}
}

// TestTiles: four running agents tile at 120x40, each following its own
// output; j moves the mark, the wheel over a tile pauses it, enter opens
// the selected agent in the usual view; a viewer at 80x24 shows two tiles
// and pages to the others, one at 120x40 the four.
func TestTiles(t *testing.T) {
	d := startDash(t, 120, 40, nil, "--command", watchCommand, "--spawn", "alpha", "--spawn", "beta", "--spawn", "gamma", "--spawn", "delta")
	beta := d.agentID("beta")
	d.waitText("delta step ")
	d.keys("v")
	s := d.waitFor("four tiles following their agents", func(s string) bool {
		return tileCount(s) == 4 && strings.Contains(s, "alpha step") && strings.Contains(s, "delta step") && strings.Contains(s, "tiles: 4 running")
	})
	d.checkTiles(s)
	if !strings.Contains(s, "┏━ ▶ ") {
		t.Fatalf("no tile is marked selected:\n%s", s)
	}
	// Each tile moves on with its agent.
	step := func(s, name string) int {
		n := -1
		for _, l := range strings.Split(s, "\n") {
			for _, f := range strings.Split(l, "│") {
				if _, after, ok := strings.Cut(f, name+" step "); ok {
					if v, err := strconv.Atoi(strings.Fields(after + " x")[0]); err == nil && v > n {
						n = v
					}
				}
			}
		}
		return n
	}
	first := step(s, "gamma")
	d.waitFor("gamma's tile to follow its output", func(s string) bool { return step(s, "gamma") > first })
	d.keys("Right") // beta's tile, right of alpha's
	d.waitFor("beta's tile marked", func(s string) bool { return strings.Contains(s, "▶ "+beta[:8]) })
	x, y := cellOf(t, d.screen(), "delta step")
	d.mouse(64, x, y, true) // the wheel up over delta's tile
	d.waitFor("delta's tile paused", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, d.agentID("delta")[:8]) && strings.Contains(l, "· paused") {
				return true
			}
		}
		return false
	})
	d.keys("Enter")
	d.waitText(beta[:8]+" · #1/1", " NOW ")

	// A viewer draws the same: two tiles at 80x24, paged with j.
	v := &dash{t: t, server: fmt.Sprintf("subdash-view-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: d.dir, state: d.state, socket: d.socket, w: 80, h: 24}
	v.run(nil, nil, "attach", "--socket", d.socket)
	v.waitText(" NOW ")
	v.keys("v")
	v.waitFor("two tiles in the viewer", func(s string) bool {
		return tileCount(s) == 2 && strings.Contains(s, "tiles 1–2 of 4 running") && strings.Contains(s, "alpha step")
	})
	v.keys("j", "j")
	v.waitFor("the viewer's next page", func(s string) bool {
		return tileCount(s) == 2 && strings.Contains(s, "tiles 3–4 of 4 running") && strings.Contains(s, "gamma step")
	})
	v.checkTiles(v.screen())
	v.keys("Escape")
	v.waitText(" NOW ")
	v.keys("q")
	v.waitExit()

	w := &dash{t: t, server: fmt.Sprintf("subdash-view-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: d.dir, state: d.state, socket: d.socket, w: 120, h: 40}
	w.run(nil, nil, "attach", "--socket", d.socket)
	w.waitText(" NOW ")
	w.keys("v")
	w.waitFor("four tiles in the viewer", func(s string) bool {
		return tileCount(s) == 4 && strings.Contains(s, "tiles: 4 running") && strings.Contains(s, "delta step")
	})
	w.keys("q")
	w.waitExit()

	d.keys("q")
	d.waitText("Quit?")
	d.keys("y")
	d.waitExit()
}

// olderHostProxy serves on a socket of its own what the host at sock
// serves, as a host of the same protocol without follow-many answers:
// its info lists no such feature and POST /v1/windows is not found. It
// returns the proxy's socket.
func olderHostProxy(t *testing.T, sock string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "older")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "host"}) },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}},
		FlushInterval: -1,
		ModifyResponse: func(res *http.Response) error {
			if res.Request.URL.Path != "/v1/info" {
				return nil
			}
			body, err := io.ReadAll(res.Body)
			if err != nil {
				return err
			}
			var info map[string]any
			if err := json.Unmarshal(body, &info); err != nil {
				return err
			}
			if fs, ok := info["features"].([]any); ok {
				info["features"] = slices.DeleteFunc(fs, func(f any) bool { return f == "follow-many" })
			}
			body, _ = json.Marshal(info)
			res.Body, res.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			res.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/windows", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.Handle("/", rp)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return path
}

// TestTilesOnAnOlderHost: a viewer of a host without follow-many says
// that tiles need a newer host, and stays on the usual view.
func TestTilesOnAnOlderHost(t *testing.T) {
	d := startDash(t, 120, 40, nil, "--command", watchCommand, "--spawn", "alpha")
	d.waitText("alpha step ")
	old := olderHostProxy(t, d.socket)
	v := &dash{t: t, server: fmt.Sprintf("subdash-view-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: d.dir, state: d.state, socket: old, w: 120, h: 40}
	v.run(nil, nil, "attach", "--socket", old)
	v.waitText(" NOW ", "alpha step ")
	v.keys("v")
	s := v.waitText("tiles need a newer host")
	if tileCount(s) != 2 || !strings.Contains(s, " NOW ") {
		t.Fatalf("the usual view did not stay:\n%s", s)
	}
	v.keys("q")
	v.waitExit()
	d.keys("q")
	d.waitText("Quit?")
	d.keys("y")
	d.waitExit()
}

// TestTilesOverSSH: a viewer over ssh draws the tiles of the agents its
// host runs, each following its output.
func TestTilesOverSSH(t *testing.T) {
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{Own: true})
	env := sshEnv(t, sshd)
	w := newWorkspace(t)
	serveThere(t, w, watchCommand, 3)
	target := "ssh://" + sshd.Host + w.dir
	for _, m := range []string{"alpha", "beta", "gamma"} {
		var sp proto.SpawnResult
		ctlHost(t, env, target, &sp, "spawn", m)
	}
	d := startSSHViewer(t, w, env, target)
	d.waitText("gamma step ")
	d.keys("v")
	s := d.waitFor("three tiles over ssh", func(s string) bool {
		return tileCount(s) == 3 && strings.Contains(s, "tiles: 3 running") && strings.Contains(s, "alpha step") && strings.Contains(s, "gamma step")
	})
	d.checkTiles(s)
	d.keys("q")
	d.waitExit()
}

// Package memohome gives each agent of the memo preset a Memo home of its
// own (MEMO_HOME, SPEC §8), so that Memo's `--prev`, which continues the
// latest session of the working directory within a home, continues that
// agent's conversation and never another agent's in the same folder; and it
// finds the session file a run wrote there, which says how the run ended.
//
// A home holds links to the user's config.toml and, where they exist, to
// the user's Agents.md (Memo's memory file), skills and auth (MCP OAuth
// tokens); Memo writes its sessions, its built-in skill (when the user has
// no skills folder) and its MCP cache into the agent's home itself. Facts
// from Memo 0.9.1 (/work/notes/memo.md §4–5): every file Memo writes is
// under MEMO_HOME; sessions are
// sessions/<encoded cwd>/<time>-<session id>.jsonl, one per run.
package memohome

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// UserHome returns the user's Memo home as Memo finds it: $MEMO_HOME ("~"
// expanded), else ~/.memo; "" when neither MEMO_HOME nor HOME is set.
func UserHome(getenv func(string) string) string {
	home := getenv("HOME")
	if h := strings.TrimSpace(getenv("MEMO_HOME")); h != "" {
		switch {
		case h == "~":
			return home
		case strings.HasPrefix(h, "~/"):
			return filepath.Join(home, h[2:])
		}
		if abs, err := filepath.Abs(h); err == nil {
			return abs
		}
		return h
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".memo")
}

// CheckConfig reports whether the Memo home userHome holds a config Memo
// runs with: a config.toml that declares a provider. Without one, Memo in
// plain mode prints its setup prompts and exits 0, or, when
// OPENAI_API_KEY or DEEPSEEK_API_KEY is set, writes a DeepSeek config (into
// the user's file, through an agent home's link) and sends the task to
// api.deepseek.com; so a memo agent does not start without one. The error
// says what to do.
func CheckConfig(userHome string) error {
	if userHome == "" {
		return errors.New("memo has no home: neither MEMO_HOME nor HOME is set; set MEMO_HOME to the folder holding memo's config.toml")
	}
	path := filepath.Join(userHome, "config.toml")
	f, err := os.Open(path)
	if err != nil {
		why := err
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			why = pe.Err
		}
		return fmt.Errorf("memo has no provider config (%s: %v); run memo once in a terminal to set one up (it asks: No provider config found. Please answer the prompts:), or set MEMO_HOME to the folder holding yours", path, why)
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if declaresProvider(sc.Text()) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("memo's config %s cannot be read: %v", path, err)
	}
	return fmt.Errorf("memo's config %s declares no provider (no [[providers.<name>]] table); run memo once in a terminal to set one up", path)
}

// declaresProvider reports whether a line of config.toml starts a provider
// (Memo's normalizeProviders takes every entry of the providers table):
// [providers.x], [[providers.x]], providers.x = …, providers = {…}.
func declaresProvider(line string) bool {
	l := strings.TrimSpace(line)
	l = strings.TrimLeft(l, "[")
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "providers") {
		return false
	}
	rest := strings.TrimSpace(l[len("providers"):])
	return strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "=") && strings.Contains(rest, "{")
}

// linked are the entries of the user's Memo home an agent's home links to,
// where the user has them; config.toml is required (CheckConfig).
var linked = []string{"config.toml", "Agents.md", "skills", "auth"}

// Prepare makes home a Memo home for one agent (mode 0700, created when
// missing): each entry of linked that exists in userHome is a symbolic link
// to it there, replacing what home held under that name; a link whose
// target is gone is removed. Call CheckConfig first. The error names the
// path that failed.
func Prepare(home, userHome string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("cannot create memo's home for the agent, %s: %v; check --state-dir", home, err)
	}
	for _, name := range linked {
		target := filepath.Join(userHome, name)
		link := filepath.Join(home, name)
		_, terr := os.Stat(target)
		cur, lerr := os.Readlink(link)
		switch {
		case terr == nil && lerr == nil && cur == target:
			continue
		case terr != nil:
			if lerr == nil { // a link to what is gone
				_ = os.Remove(link)
			}
			continue
		}
		if err := os.RemoveAll(link); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("cannot replace %s in memo's home for the agent: %v", link, err)
		}
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("cannot link %s to %s in memo's home for the agent: %v", link, target, err)
		}
	}
	return nil
}

// EncodeDir returns the folder name Memo gives the sessions of the
// working directory dir (getSessionsDir): "-" and dir's segments joined by
// "-", each character but [A-Za-z0-9._-] made "_" (two for a character
// outside the BMP, which JavaScript sees as two code units); "-root" for
// "/". dir must be absolute and, as Memo's process.cwd(), real.
func EncodeDir(dir string) string {
	var segs []string
	for _, s := range strings.Split(dir, "/") {
		if s == "" {
			continue
		}
		var b strings.Builder
		for _, r := range s {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
				b.WriteRune(r)
			case r > 0xFFFF:
				b.WriteString("__")
			default:
				b.WriteByte('_')
			}
		}
		segs = append(segs, b.String())
	}
	if len(segs) == 0 {
		return "-root"
	}
	return "-" + strings.Join(segs, "-")
}

// HasSession reports whether home holds a session of the working directory
// dir, which `memo --prev` would continue (without one it exits 1: "No
// previous session found for current directory.").
func HasSession(home, dir string) bool {
	entries, err := os.ReadDir(filepath.Join(home, "sessions", EncodeDir(dir)))
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") && !e.IsDir() {
			return true
		}
	}
	return false
}

// Snapshot is the set of session files of a home at one moment, by path.
type Snapshot map[string]bool

// Sessions returns the session files under home/sessions (of every working
// directory); an empty Snapshot when there are none yet.
func Sessions(home string) Snapshot {
	snap := Snapshot{}
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
	for _, p := range paths {
		snap[p] = true
	}
	return snap
}

// NewSession returns the session file that appeared in home since before
// (the run's own: a home belongs to one agent, which runs one submission
// at a time), the most recently modified when there are several; "" when
// none did (the run ended before its session started: no config, no
// input, --prev with no session).
func NewSession(home string, before Snapshot) string {
	newest, at := "", int64(0)
	for p := range Sessions(home) {
		if before[p] {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if t := fi.ModTime().UnixNano(); newest == "" || t > at {
			newest, at = p, t
		}
	}
	return newest
}

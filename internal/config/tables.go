package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/theme"
)

// The file's tables: [presets.NAME], [keys], [theme] and [[hosts]].

// presets reads [presets.NAME] tables.
func (r *reader) presets(p toml.Primitive) {
	names, vals, ok := r.table("presets", p)
	if !ok {
		return
	}
	for _, name := range names {
		keys, inner, ok := r.table("presets."+name, vals[name])
		if !ok {
			continue
		}
		_, line := r.value(vals[name])
		if !slices.Contains(r.schema.Presets, name) {
			r.fail(line, "[presets.%s]: unknown preset %q; the presets are %s", name, name, strings.Join(r.schema.Presets, ", "))
			continue
		}
		var pr Preset
		for _, k := range keys {
			v, line := r.value(inner[k])
			if k != "args" {
				r.fail(line, "[presets.%s]: unknown key %q; a preset's table has args = \"…\" only", name, k)
				continue
			}
			s, ok := v.(string)
			if !ok {
				r.fail(line, "[presets.%s] args = %s: wrong type: args takes text in quotes: args = \"--model sonnet\"", name, show(v))
				continue
			}
			pr = Preset{Args: s, Line: line}
		}
		r.file.Presets[name] = pr
	}
}

// keys reads [keys] and rebinds the key map with it.
func (r *reader) keys(p toml.Primitive) {
	names, vals, ok := r.table("keys", p)
	if !ok {
		return
	}
	for _, name := range names {
		v, line := r.value(vals[name])
		var ks []string
		switch x := v.(type) {
		case string:
			ks = []string{x}
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					ks = nil
					break
				}
				ks = append(ks, s)
			}
			if ks == nil && len(x) > 0 {
				r.fail(line, "[keys] %s = %s: wrong type: give a key in quotes or an array of them: %s = [\"n\", \"ctrl+n\"]", name, show(v), name)
				continue
			}
		default:
			r.fail(line, "[keys] %s = %s: wrong type: give a key in quotes or an array of them: %s = [\"n\", \"ctrl+n\"]", name, show(v), name)
			continue
		}
		r.file.Rebound = append(r.file.Rebound, keymap.Rebinding{Action: name, Keys: ks, Where: r.where(line)})
	}
	km, err := keymap.DefaultKeyMap().Rebind(r.file.Rebound)
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	r.file.Keys = km
}

// theme reads [theme].
func (r *reader) theme(p toml.Primitive) {
	names, vals, ok := r.table("theme", p)
	if !ok {
		return
	}
	for _, name := range names {
		v, line := r.value(vals[name])
		if name != "background" {
			r.fail(line, "[theme]: unknown key %q; [theme] has background = \"auto\" | \"dark\" | \"light\"", name)
			continue
		}
		s, ok := v.(string)
		if !ok {
			r.fail(line, "[theme] background = %s: wrong type: give \"auto\", \"dark\" or \"light\"", show(v))
			continue
		}
		b, err := theme.ParseBackground(s)
		if err != nil {
			r.fail(line, "[theme] background: %v", err)
			continue
		}
		r.file.Theme = Theme{Background: b, Line: line}
	}
}

// hosts reads [[hosts]]. The decoder keeps one line per key of an array
// of tables (its last table's), so each table is named by the line of its
// own [[hosts]] header, found in the text.
func (r *reader) hosts(p toml.Primitive) {
	var tables []map[string]toml.Primitive
	headers := headerLines(r.text, "hosts")
	if err := r.md.PrimitiveDecode(p, &tables); err != nil {
		_, line := r.value(p)
		r.fail(line, "hosts must be an array of tables: [[hosts]] with name, target and read_only")
		return
	}
	seen := map[string]int{}
	for i, t := range tables {
		line := 0
		if i < len(headers) {
			line = headers[i]
		}
		h := Host{Line: line}
		for _, k := range sortedKeys(t) {
			var v any
			if err := r.md.PrimitiveDecode(t[k], &v); err != nil {
				r.fail(line, "[[hosts]] %s: %v", k, err)
				continue
			}
			var ok bool
			switch k {
			case "name":
				h.Name, ok = v.(string)
			case "target":
				h.Target, ok = v.(string)
			case "read_only":
				h.ReadOnly, ok = v.(bool)
			default:
				r.fail(line, "[[hosts]]: unknown key %q; a host has name, target and read_only", k)
				continue
			}
			if !ok {
				want := "text in quotes"
				if k == "read_only" {
					want = "true or false"
				}
				r.fail(line, "[[hosts]] %s = %s: wrong type: %s takes %s", k, show(v), k, want)
			}
		}
		switch {
		case strings.TrimSpace(h.Name) == "":
			r.fail(line, "[[hosts]]: give the host a name: name = \"work\"")
		case seen[h.Name] != 0:
			r.fail(line, "[[hosts]]: name %q is taken by the [[hosts]] of line %d; give each host its own", h.Name, seen[h.Name])
		default:
			seen[h.Name] = line
		}
		if err := checkTarget(h.Target); err != nil {
			r.fail(line, "[[hosts]] %s: %v", h.Name, err)
		}
		r.file.Hosts = append(r.file.Hosts, h)
	}
}

// checkTarget checks a [[hosts]] target: an ssh:// target (SPEC §9) or
// the absolute folder of a host on this machine.
func checkTarget(t string) error {
	switch {
	case strings.TrimSpace(t) == "":
		return errors.New(`give its target: target = "ssh://host/abs/dir" or an absolute folder`)
	case sshlink.IsTarget(t):
		_, err := sshlink.ParseTarget(t)
		return err
	case !filepath.IsAbs(t):
		return fmt.Errorf("target %q: give an ssh://[user@]host[:port]/abs/dir target or an absolute folder", t)
	}
	return nil
}

// headerLines returns the lines of the [[name]] headers in text.
func headerLines(text, name string) []int {
	var out []int
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if inner, ok := strings.CutPrefix(l, "[["); ok {
			if inner, _, ok = strings.Cut(inner, "]]"); ok && strings.TrimSpace(inner) == name {
				out = append(out, i+1)
			}
		}
	}
	return out
}

func sortedKeys(m map[string]toml.Primitive) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Package config reads the config file, $XDG_CONFIG_HOME/subdash/config.toml
// (else ~/.config/subdash/config.toml), and lays its settings under the
// command line's and the environment's (docs/configuration.md):
//
//   - top-level keys are the long flags, valued as the flags take them
//     (max-agents = 2, grace = "3s", preset = "claude"); dir, socket,
//     state-dir, spawn and host are flags only: they name one folder's
//     host, and a global one would break one host per folder;
//   - [presets.NAME] args: the arguments of preset NAME (SPEC §8) where
//     --preset-args is not given;
//   - [keys]: actions of the dashboard rebound (keymap.Actions);
//   - [theme] background: auto, dark or light (NO_COLOR still wins);
//   - [[hosts]]: name, target, read_only: the hosts `subdash attach
//     @NAME` and `@all` open (SPEC §9, several hosts).
//
// Precedence (SPEC §2): flags, then the environment, then the file, then
// the defaults (Apply). A file that says anything this package does not
// know, or a value of the wrong type, is an error naming the line: nothing
// in it is silently ignored.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/theme"
)

// Path returns where the config file is: $XDG_CONFIG_HOME/subdash/config.toml
// when XDG_CONFIG_HOME is an absolute path (the XDG rule), else
// $HOME/.config/subdash/config.toml; "" when neither is set.
func Path(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "subdash", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "subdash", "config.toml")
	}
	return ""
}

// FlagsOnly are the long flags the file may not set: each names one
// folder's host (its folder, socket, state or ssh target) or one run's
// agents, and set for every run they would break one host per folder.
var FlagsOnly = []string{"dir", "socket", "state-dir", "spawn", "host"}

// File is a config file as Load read and checked it. The zero File (no
// file) sets nothing.
type File struct {
	// Path is where it was read ("" when there was none to read).
	Path string
	// Exists is false when no file was at Path: every setting then comes
	// from the flags, the environment or the defaults.
	Exists bool
	// Settings are the top-level keys, in the file's order.
	Settings []Setting
	// Presets are the [presets.NAME] tables, by preset name.
	Presets map[string]Preset
	// Keys is the dashboard's key map with [keys] applied; Rebound lists
	// the lines that changed it, in the file's order.
	Keys    keymap.KeyMap
	Rebound []keymap.Rebinding
	// Theme is [theme]; its zero value is auto, the default.
	Theme Theme
	// Hosts are the [[hosts]] tables, in the file's order: the hosts
	// `subdash attach @NAME` and `@all` open.
	Hosts []Host
}

// Setting is one top-level key: a long flag and its value.
type Setting struct {
	Name string // the long flag: "max-agents"
	// Values is the value as the flag takes it on the command line
	// ("2", "3s", "true"); a repeatable flag (kube-env) has one per
	// element of its array.
	Values []string
	Line   int // the line of the key, from 1
}

// Preset is one [presets.NAME] table.
type Preset struct {
	Args string // args: appended to the preset's command, as --preset-args
	Line int    // the line of args
}

// Theme is the [theme] table.
type Theme struct {
	Background theme.Background // "" in a File without [theme]: auto
	Line       int              // the line of background; 0 when not given
}

// Host is one [[hosts]] table: a host `subdash attach @NAME` (or @all)
// opens (SPEC §9, several hosts).
type Host struct {
	Name     string // how the dashboard names it; unique in the file
	Target   string // ssh://[user@]host[:port]/abs/dir, or the absolute folder of a host here
	ReadOnly bool   // attach as a read-only viewer
	Line     int    // the line of its [[hosts]]
}

// Schema is what a file's keys may be.
type Schema struct {
	// Flags are the long flags the top-level keys may name, every
	// command's together; a key's value is parsed by its flag (Set) to
	// check it. Load leaves Flags changed: pass a set of its own.
	Flags *pflag.FlagSet
	// Presets are the preset names [presets.NAME] may use (SPEC §8).
	Presets []string
}

// Load reads and checks the config file at path. No file there is no
// error: it returns a File with Exists false. Errors name the file and
// the line: a syntax error, an unknown key or table, a value of the wrong
// type or that its flag refuses, a flag the file may not set (FlagsOnly),
// both command and preset, a [keys] clash; every problem found is joined
// into the one error.
func Load(path string, s Schema) (*File, error) {
	f := &File{Path: path, Keys: keymap.DefaultKeyMap(), Presets: map[string]Preset{}}
	if path == "" {
		return f, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file: %v; fix it or remove it", err)
	}
	f.Exists = true
	r := &reader{path: path, text: string(data), file: f, schema: s}
	if err := r.read(); err != nil {
		return nil, err
	}
	return f, nil
}

// reader walks one file's keys, collecting its problems.
type reader struct {
	path   string
	text   string
	file   *File
	schema Schema
	md     toml.MetaData
	errs   []error
}

// fail records a problem at line.
func (r *reader) fail(line int, format string, a ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s: %s", r.where(line), fmt.Sprintf(format, a...)))
}

// where names line of the file for messages: "path line 3".
func (r *reader) where(line int) string { return fmt.Sprintf("%s line %d", r.path, line) }

func (r *reader) read() error {
	var top map[string]toml.Primitive
	md, err := toml.Decode(r.text, &top)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: %s", r.where(pe.Position.Line), pe.Message)
		}
		return fmt.Errorf("%s: %v", r.path, err)
	}
	r.md = md
	var command, preset *Setting
	var names []string // the top-level keys in the file's order, each once
	for _, k := range md.Keys() {
		if !slices.Contains(names, k[0]) { // [presets.x] makes presets without a key of its own
			names = append(names, k[0])
		}
	}
	for _, name := range names {
		switch name {
		case "presets":
			r.presets(top[name])
		case "keys":
			r.keys(top[name])
		case "theme":
			r.theme(top[name])
		case "hosts":
			r.hosts(top[name])
		default:
			if st, ok := r.setting(name, top[name]); ok {
				r.file.Settings = append(r.file.Settings, st)
				switch name {
				case "command":
					command = &r.file.Settings[len(r.file.Settings)-1]
				case "preset":
					preset = &r.file.Settings[len(r.file.Settings)-1]
				}
			}
		}
	}
	if command != nil && preset != nil {
		r.fail(preset.Line, "preset and command (line %d) are both given; keep one of them (SPEC §2: a preset takes the command's place)", command.Line)
	}
	return errors.Join(r.errs...)
}

// value decodes p, the value of key k, and returns it with its line.
func (r *reader) value(p toml.Primitive) (v any, line int) {
	var c capture
	err := r.md.PrimitiveDecode(p, &c)
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line = pe.Position.Line
	}
	return c.data, line
}

// capture keeps a decoded value and fails on purpose, so that the
// decoder's error carries the line of the key (toml.ParseError.Position):
// toml.MetaData tells no key's line otherwise.
type capture struct{ data any }

var errCaptured = errors.New("captured")

// UnmarshalTOML keeps data.
func (c *capture) UnmarshalTOML(data any) error { c.data = data; return errCaptured }

// table decodes p as a table and returns its keys in the file's order,
// with each key's value; ok is false (a problem recorded) when p is no
// table.
func (r *reader) table(name string, p toml.Primitive) (keys []string, vals map[string]toml.Primitive, ok bool) {
	v, line := r.value(p)
	if _, isTable := v.(map[string]any); !isTable {
		r.fail(line, "%s must be a table: [%s]", name, name)
		return nil, nil, false
	}
	if err := r.md.PrimitiveDecode(p, &vals); err != nil {
		r.fail(line, "[%s]: %v", name, err)
		return nil, nil, false
	}
	prefix := strings.Split(name, ".")
	for _, k := range r.md.Keys() {
		if len(k) == len(prefix)+1 && slices.Equal(k[:len(prefix)], prefix) {
			keys = append(keys, k[len(prefix)])
		}
	}
	return keys, vals, true
}

// setting checks top-level key name against its flag and returns it as the
// flag takes it.
func (r *reader) setting(name string, p toml.Primitive) (Setting, bool) {
	v, line := r.value(p)
	st := Setting{Name: name, Line: line}
	if slices.Contains(FlagsOnly, name) {
		r.fail(line, "%s is a flag only (--%s): it names one folder's host, and a global one would break one host per folder; remove the line", name, name)
		return st, false
	}
	if name == "preset-args" {
		r.fail(line, "preset-args: give a preset's arguments in its own table, [presets.NAME] args = \"…\", so they follow the preset they are for")
		return st, false
	}
	fl := r.schema.Flags.Lookup(name)
	if fl == nil {
		msg := fmt.Sprintf("unknown key %q: the top-level keys are subdash's long flags (subdash --help), tables are [presets.NAME], [keys], [theme] and [[hosts]]", name)
		if near := r.nearest(name); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", near)
		}
		r.fail(line, "%s", msg)
		return st, false
	}
	vals, ok := asFlag(fl.Value.Type(), v)
	if !ok {
		r.fail(line, "%s = %s: wrong type: %s takes %s", name, show(v), name, typeWords(name, fl.Value.Type()))
		return st, false
	}
	for _, s := range vals {
		if err := fl.Value.Set(s); err != nil {
			r.fail(line, "%s = %s: %v", name, show(v), err)
			return st, false
		}
	}
	st.Values = vals
	return st, true
}

// nearest returns the flag name closest to name when it is a likely typo.
func (r *reader) nearest(name string) string {
	best, bestD := "", 3
	r.schema.Flags.VisitAll(func(f *pflag.Flag) {
		if d := distance(name, f.Name); d < bestD && !slices.Contains(FlagsOnly, f.Name) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// asFlag turns a TOML value into what a flag of type typ takes on the
// command line; ok is false when the TOML type is not the flag's.
func asFlag(typ string, v any) ([]string, bool) {
	switch typ {
	case "int":
		n, ok := v.(int64)
		return []string{strconv.FormatInt(n, 10)}, ok
	case "float64":
		switch n := v.(type) {
		case float64:
			return []string{strconv.FormatFloat(n, 'g', -1, 64)}, true
		case int64:
			return []string{strconv.FormatInt(n, 10)}, true
		}
		return nil, false
	case "bool":
		b, ok := v.(bool)
		return []string{strconv.FormatBool(b)}, ok
	case "stringArray":
		arr, ok := v.([]any)
		if !ok {
			return nil, false
		}
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	s, ok := v.(string) // string, duration, size: text
	return []string{s}, ok
}

// typeWords says what a flag of type typ takes, with an example.
func typeWords(name, typ string) string {
	switch typ {
	case "int":
		return fmt.Sprintf("a whole number: %s = 2", name)
	case "float64":
		return fmt.Sprintf("a number: %s = 0.5", name)
	case "bool":
		return fmt.Sprintf("true or false: %s = true", name)
	case "stringArray":
		return fmt.Sprintf(`an array of strings: %s = ["A", "B"]`, name)
	case "duration":
		return fmt.Sprintf(`a duration in quotes: %s = "90s" (ms, s, m, h; d for days where the flag says so)`, name)
	case "size":
		return fmt.Sprintf(`a size in quotes: %s = "10MiB"`, name)
	}
	return fmt.Sprintf(`text in quotes: %s = "…"`, name)
}

// show writes a TOML value as the file would.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

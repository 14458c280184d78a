// Package wiretest reads testdata/wire.golden of package wire, which
// pins the JSON names of every route's answer and every event's data, for
// the tests that check them: wire's (the types) and the server's (a live
// host's answers). Only tests import it.
package wiretest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// GoldenPath is the path of wire's testdata/wire.golden.
func GoldenPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "wire.golden")
}

// Golden returns the golden's names per route.
func Golden(t *testing.T) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(GoldenPath())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	route := ""
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.HasPrefix(l, "\t") {
			route = l
			out[route] = map[string]bool{}
			continue
		}
		out[route][strings.TrimSpace(l)] = true
	}
	return out
}

// Names fills v's type in whole and returns the JSON paths of its
// encoding, sorted.
func Names(t *testing.T, v any) []string {
	t.Helper()
	p := reflect.New(reflect.TypeOf(v))
	fill(p.Elem(), 0)
	data, err := json.Marshal(p.Interface())
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	Paths(doc, "", nil, set)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fill sets every field of v to a value that JSON does not leave out.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Unix(1e9, 0).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// Paths adds the JSON paths of doc under prefix to set. Objects whose
// keys are a map's (in maps, from the golden; else guessed as none) get
// "{}" instead of their keys.
func Paths(doc any, prefix string, maps map[string]bool, set map[string]bool) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch d := doc.(type) {
	case map[string]any:
		if len(d) == 0 {
			if prefix != "" {
				set[prefix] = true
			}
			return
		}
		isMap := maps[join("{}")] || maps == nil && prefix != "" && len(d) == 1 && d["x"] != nil
		for k, v := range d {
			if isMap {
				k = "{}"
			}
			p := join(k)
			set[p] = true
			Paths(v, p, maps, set)
		}
	case []any:
		p := prefix + "[]"
		set[p] = true
		for _, e := range d {
			Paths(e, p, maps, set)
		}
	}
}

// DiffLines says which lines of want are missing from got and which are
// new.
func DiffLines(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

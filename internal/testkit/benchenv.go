package testkit

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// EnvInts returns the comma-separated numbers in the environment variable
// env (a benchmark's counts, e.g. SUBDASH_BENCH_RECORDS=0,10000), or those
// of def when it is unset; a number that does not parse fails tb naming
// the variable.
func EnvInts(tb testing.TB, env, def string) []int {
	tb.Helper()
	v := os.Getenv(env)
	if v == "" {
		v = def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			tb.Fatalf("%s: %v", env, err)
		}
		out = append(out, n)
	}
	return out
}

package wire

import (
	"net/url"
	"testing"
)

// TestRouteAt: an agent id reaches the host as it was given, whatever it
// holds: the router would clean "." and ".." away and split at a slash,
// and an empty id would leave the path without its segment.
func TestRouteAt(t *testing.T) {
	for _, c := range []struct {
		rt   Route
		name string
		q    url.Values
		want string
	}{
		{Send, "a1b2", nil, "/v1/agents/a1b2/send"},
		{Send, "/root/review", url.Values{"queue": {"1"}}, "/v1/agents/%2Froot%2Freview/send?queue=1"},
		{Close, ".", nil, "/v1/agents/%2E/close"},
		{Close, "..", nil, "/v1/agents/%2E%2E/close"},
		{Close, "", nil, "/v1/agents/%20/close"},
		{Follow, "s1", nil, "/v1/events/s1/follow"},
		{List, "ignored", nil, "/v1/agents"},
		{Search, "", url.Values{"q": {"a b"}}, "/v1/search?q=a+b"},
	} {
		if got := c.rt.At(c.name, c.q); got.URL != c.want || got.Route != c.rt {
			t.Errorf("%s.At(%q, %v) = %q, want %q", c.rt.Pattern(), c.name, c.q, got.URL, c.want)
		}
	}
}

// TestRoutesUnique: no two routes share a pattern (the server registers
// each once).
func TestRoutesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range Routes {
		if seen[rt.Pattern()] {
			t.Errorf("%s twice in Routes", rt.Pattern())
		}
		seen[rt.Pattern()] = true
		if rt.Op == "" || rt.Answers == "" {
			t.Errorf("%s: no operation or answer named: %+v", rt.Pattern(), rt)
		}
	}
}

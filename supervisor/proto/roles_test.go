package proto

import (
	"context"
	"testing"
)

// The origin travels in the context: a spawn names who asked.
func TestOriginTravelsInTheContext(t *testing.T) {
	ctx := context.Background()
	if o := OriginOf(ctx); o != "" {
		t.Fatalf("a context without origin names %q", o)
	}
	if o := OriginOf(WithOrigin(ctx, "mcp")); o != "mcp" {
		t.Fatalf("origin = %q, want mcp", o)
	}
}

// A host of protocol 2 has what protocol 2 takes; a front-end asks Has,
// and a host config without features has none of them.
func TestHostConfigHas(t *testing.T) {
	now := HostConfig{Features: Protocol2Features()}
	for _, w := range []string{FeatureTextMessage, FeatureTree, FeatureMultiAgent, FeatureInnerAgents, FeatureSteer, FeatureSearch, FeatureChanges, FeatureStall, FeatureBudget, FeatureOutputRate, FeatureOutputBatch} {
		if !now.Has(w) {
			t.Errorf("this build's host lacks %s: %v", w, now.Features)
		}
	}
	if (HostConfig{}).Has(FeatureTextMessage) {
		t.Error("a host that lists no features has text-message")
	}
	a := Protocol2Features()
	a[0] = "changed"
	if Protocol2Features()[0] != FeatureTextMessage {
		t.Error("Protocol2Features shares its slice with callers")
	}
}

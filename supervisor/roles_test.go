package supervisor

import (
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// A spawn keeps who asked, as its context names it (proto.WithOrigin): the
// host's quit question says whose agents it ends (SPEC §7).
func TestSpawnKeepsTheOriginOfItsContext(t *testing.T) {
	s := newTestSupervisor(t, "cat")
	mine, err := s.Spawn(t.Context(), "mine")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.Spawn(proto.WithOrigin(t.Context(), "ctl"), "theirs")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{mine.AgentID: "", theirs.AgentID: "ctl"} {
		if a, _ := s.Agent(id); a.Origin != want {
			t.Errorf("agent %s has origin %q, want %q", id, a.Origin, want)
		}
	}
}

// HostConfig is what a dashboard shows: the command as shown, the limit,
// the preset, the warnings found since start, this build's features.
func TestHostConfigIsWhatADashboardShows(t *testing.T) {
	p, err := LookupPreset("claude", "--x", "")
	if err != nil {
		t.Fatal(err)
	}
	p.Approvals = true
	s := newTestSupervisor(t, "true", func(c *Config) {
		c.Preset, c.MaxAgents, c.CommandShown, c.Notes = p, 3, "claude (preset)", []string{"a note"}
	})
	s.warn("the notify command failed")
	h := s.HostConfig()
	if h.Command != "claude (preset)" || h.MaxAgents != 3 || h.PresetName != "claude" || h.PresetArgs != "--x" ||
		h.PresetFormat != "claude" || !h.Approvals || !h.Structured() || h.Dir != s.Config().Dir || h.ReadOnly {
		t.Errorf("host config %+v", h)
	}
	if len(h.Notes) != 1 || h.Notes[0] != "a note" || !strings.Contains(strings.Join(h.Warnings, "\n"), "the notify command failed") {
		t.Errorf("notes %q, warnings %q", h.Notes, h.Warnings)
	}
	if !h.Has(proto.FeatureTextMessage) {
		t.Errorf("features %v", h.Features)
	}
}

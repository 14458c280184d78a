package proto

import (
	"context"
	"fmt"
	"io"
)

// Changes is what a submission changed in its working tree (SPEC §15):
// the files, lines added and removed between the snapshot taken at its
// start and the tree at its end (or now, while it runs and Pending is
// set). Tracked is false outside a git work tree and with a runner whose
// submissions have their own files (Note says why); Shared says other
// submissions ran in the same work tree at the same time, so some of the
// changes may be theirs; Note also says what a snapshot skipped or why it
// failed (never a failed submission).
type Changes struct {
	Files   int    `json:"files"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Shared  bool   `json:"shared,omitempty"`
	Note    string `json:"note,omitempty"`
	Tracked bool   `json:"tracked"`
	Pending bool   `json:"pending,omitempty"`
}

// Short is the changes as the agents table shows them: "+12 −3", "±0"
// (nothing changed), "±?" (not counted yet), "*" after the counts when
// Shared; "" when not tracked (the log pane's title says so, Note why).
func (c *Changes) Short() string {
	switch {
	case c == nil, !c.Tracked:
		return ""
	case c.Pending:
		return "±?"
	}
	s := "±0"
	if c.Files > 0 {
		s = fmt.Sprintf("+%d −%d", c.Added, c.Removed)
	}
	if c.Shared {
		s += "*"
	}
	return s
}

// Differ writes what a submission changed (SPEC §15; the host's feature
// FeatureChanges): WriteChanges writes the unified diff of submission seq
// (0 = the latest) of agent id, from the snapshot at its start to its end
// (to now while it runs), coloured as git colours it when color is set.
// Errors: unknown agent or submission; changes not tracked (CodeInvalid,
// the reason); git's failure.
type Differ interface {
	WriteChanges(ctx context.Context, w io.Writer, id string, seq int, color bool) error
}

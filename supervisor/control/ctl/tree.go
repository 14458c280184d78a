package ctl

import (
	"fmt"
	"io"
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// writeTree writes the agents of res as the tree of SPEC §14, for people
// (`subdash ctl list --tree`): /root, then each agent under its parent
// with tree glyphs, oldest first among siblings, a line each: its task
// name (or short id), short id, status, marks (restored, queued N, needs
// you) and its last message on one line. An agent whose parent is not
// listed stands under /root.
func writeTree(w io.Writer, res proto.ListResult) error {
	known := make(map[string]bool, len(res.Agents))
	for _, a := range res.Agents {
		known[a.AgentID] = true
	}
	children := map[string][]proto.Summary{}
	for _, a := range res.Agents {
		parent := a.ParentID
		if !known[parent] {
			parent = ""
		}
		children[parent] = append(children[parent], a)
	}
	var b strings.Builder
	b.WriteString(proto.RootPath)
	if len(res.Agents) == 0 {
		b.WriteString(" (no agents)")
	}
	b.WriteString("\n")
	var walk func(parent, indent string)
	walk = func(parent, indent string) {
		kids := children[parent]
		for i, a := range kids {
			glyph, more := "├─ ", "│  "
			if i == len(kids)-1 {
				glyph, more = "└─ ", "   "
			}
			b.WriteString(indent + glyph + treeLine(a) + "\n")
			walk(a.AgentID, indent+more)
		}
	}
	walk("", "")
	if res.Failure != "" {
		fmt.Fprintf(&b, "failure: %s\n", termtext.OneLine(res.Failure, 0))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// treeLine is one agent's line of writeTree, without its glyphs.
func treeLine(a proto.Summary) string {
	name := a.AgentPath[strings.LastIndexByte(a.AgentPath, '/')+1:]
	if name == "" {
		name = termtext.ShortID(a.AgentID)
	}
	parts := []string{name}
	if name != termtext.ShortID(a.AgentID) {
		parts = append(parts, termtext.ShortID(a.AgentID))
	}
	parts = append(parts, string(a.Status))
	if a.Restored {
		parts = append(parts, "restored")
	}
	if n := len(a.QueuedMessages); n > 0 {
		parts = append(parts, fmt.Sprintf("queued %d", n))
	} else if a.QueuedMessage != "" {
		parts = append(parts, "queued 1")
	}
	if a.NeedsYou != nil {
		parts = append(parts, "needs you")
	}
	if m := termtext.OneLine(a.LastMessage, 60); m != "" {
		parts = append(parts, fmt.Sprintf("%q", m))
	}
	return strings.Join(parts, "  ")
}

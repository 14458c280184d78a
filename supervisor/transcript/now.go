package transcript

import "github.com/subdash/subdash/supervisor/termtext"

// MaxNowRunes bounds what Now returns, in runes: more than any table row
// shows of it.
const MaxNowRunes = 200

// Now returns what the agent is doing now, as one clean line for the
// dashboard's row (SPEC §7): "→ Bash npm test" while a tool call runs (its
// tool and the one-line summary of its input), the retry or state the CLI
// reports ("retrying model (attempt 2/10)", "compacting"), else the last
// line of the assistant's text of this turn, else "thinking" or
// "writing"; once the final event came, the first line of the answer, or
// of the error of a failed run (claude's "API Error: 500 …"). "" before
// the first event. At most MaxNowRunes runes. Cost: the length of the
// last line of the turn's text, never the whole text.
func (p *Parser) Now() string {
	o := p.outcome
	switch {
	case o.Final && o.Success:
		return termtext.FirstLine(o.Answer, MaxNowRunes)
	case o.Final:
		return termtext.FirstLine(o.Error, MaxNowRunes)
	case len(p.running) > 0:
		return arrow(p.calls[p.running[len(p.running)-1]])
	case p.idless != nil:
		return arrow(*p.idless)
	case p.activity == "thinking" || p.activity == "writing":
		if s := termtext.LastLine(p.pending.String(), MaxNowRunes); s != "" {
			return s
		}
		if s := termtext.LastLine(p.turnText.String(), MaxNowRunes); s != "" {
			return s
		}
	}
	return termtext.OneLine(p.activity, MaxNowRunes)
}

// arrow is a running tool call as Now says it.
func arrow(c toolCall) string {
	name := c.name
	if name == "" {
		name = "tool"
	}
	if c.summary == "" {
		return "→ " + name
	}
	return termtext.OneLine("→ "+name+" "+c.summary, MaxNowRunes)
}

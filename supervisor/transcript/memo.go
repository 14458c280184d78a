package transcript

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/termtext"
)

// Memo's plain mode (memo 0.9.1, `packages/tui/src/commands/index.tsx`,
// PlainMode) is text, not JSON: every console.log call of Memo is one
// block, and Ink, which draws an empty frame below them, erases that frame
// before each block after the first with ESC[2K ESC[1A ESC[2K ESC[G at the
// start of a line, and draws it again after the block (one more "\n"). So a
// line that starts with erase codes starts a block, and the blank lines
// before it are the frame's. The blocks, in order: the DANGEROUS MODE
// banner (--dangerous), "[session] Continued from previous session
// context." (--prev), "User: <message>", per tool call "[tool] <name>" and
// "[input] <json>" (no result is printed), without --dangerous the
// approval lines, then the final text, "[tokens] prompt=… completion=…
// total=…" and "provider=… model=…". A model failure is a final text such
// as "LLM call failed: …" (Memo exits 0 after it); a missing config prints
// its setup prompts instead of all of this. The session file Memo writes
// decides the outcome where the host can read it (ReadMemoSession); this
// parser gives the transcript, and the outcome where that file is out of
// reach.

// memoSetupPrompt is the line Memo prints when it has no provider config
// and asks for one on stdin, which headless it cannot get.
const memoSetupPrompt = "No provider config found. Please answer the prompts:"

// memoCancelled is the final text Memo gives a turn stopped because a tool
// was denied approval ("the user refused the tool; the operation
// stopped").
const memoCancelled = "用户拒绝了工具执行，已停止当前操作。"

// memoErrorPrefixes start the final texts Memo gives a turn that failed
// (turn_end status "error" or "prompt_limit"; agent/loop.ts).
var memoErrorPrefixes = []string{
	"LLM call failed: ",
	"Model protocol error: ",
	"Context tokens (",
	"Tool usage is disabled in the current permission mode.",
	"Unable to produce a final answer.",
}

// maxMemoText bounds the text of a user or text block kept in an entry, in
// bytes; the rest is counted (the log file has it).
const maxMemoText = 1 << 20

// memoBlock says what the block being read is.
type memoBlock int

const (
	memoNone   memoBlock = iota // no text line yet
	memoChrome                  // a block whose entry is made (or that shows nothing)
	memoUser                    // "User: <message>", perhaps several lines
	memoText                    // the final text, perhaps several lines
	memoSetup                   // the setup prompts, which headless get no answer
)

// memoState is the parser's state for FormatMemo.
type memoState struct {
	block  memoBlock
	lines  []string // the text lines of a user or text block
	size   int      // bytes in lines
	more   int      // bytes of the block left out of lines (maxMemoText)
	blanks int      // blank lines since the block's last text line
	// tool is the tool of a "[tool]" line still waiting for its "[input]".
	tool    string
	hasTool bool
	// held is the latest text block: the answer once "[tokens]" follows.
	// Memo prints one final text, so a text block followed by another is
	// not it (in a log read back, stderr lines are mixed in).
	held    string
	hasHeld bool
	tokens  bool // "[tokens]" was seen
}

// memoLine parses one line of Memo's plain mode (see the top of this file).
func (p *Parser) memoLine(line []byte) []Entry {
	rest, boundary := memoErase(line)
	var out []Entry
	if boundary {
		out = p.memoEndBlock(out)
	}
	text := strings.TrimRight(plain(strings.ToValidUTF8(string(rest), "\uFFFD")), " \t")
	m := &p.memo
	if strings.TrimSpace(text) == "" {
		if m.block != memoNone {
			m.blanks++
		}
		if m.block == memoUser && m.blanks == 2 && len(m.lines) > 0 {
			// "User: <message>\n" and the frame: the message (trimmed by
			// Memo) has ended, though the next block may come only once
			// the model answers.
			out = p.memoUserEntry(out)
		}
		return out
	}
	switch m.block {
	case memoNone:
		return p.memoClassify(out, text)
	case memoSetup:
		return out
	case memoUser, memoText:
		for ; m.blanks > 0 && len(m.lines) > 0; m.blanks-- {
			m.add("")
		}
		m.blanks = 0
		m.add(text)
		return out
	}
	// more text in a block of one line: a line Memo did not print this way
	return append(out, Entry{Kind: KindUnknown, Text: termtext.OneLine(text, MaxSummaryRunes)})
}

// memoClassify starts a block with its first text line.
func (p *Parser) memoClassify(out []Entry, text string) []Entry {
	m := &p.memo
	m.block, m.blanks = memoChrome, 0
	if m.hasTool && !strings.HasPrefix(text, "[input] ") {
		out = append(out, p.toolCall("", m.tool, ""))
		m.hasTool = false
	}
	switch {
	case strings.Contains(text, "DANGEROUS MODE: All tool approvals are bypassed"):
	case strings.HasPrefix(text, "[session] "):
		p.thinking()
		out = append(out, Entry{Kind: KindInit, Text: "memo continues its previous session (--prev: the last exchange)"})
	case strings.HasPrefix(text, "User: ") || text == "User:":
		m.block = memoUser
		m.add(strings.TrimPrefix(strings.TrimPrefix(text, "User:"), " "))
	case strings.HasPrefix(text, "[tool] "):
		m.tool, m.hasTool = strings.TrimPrefix(text, "[tool] "), true
		p.activity = runningActivity(termtext.OneLine(m.tool, MaxSummaryRunes), "")
		p.idless = &toolCall{name: termtext.OneLine(m.tool, MaxSummaryRunes)}
	case strings.HasPrefix(text, "[input] ") && m.hasTool:
		out = append(out, p.toolCall("", m.tool, toolSummary([]byte(strings.TrimPrefix(text, "[input] ")))))
		m.hasTool = false
	case strings.HasPrefix(text, "[approval required] ") || strings.HasPrefix(text, "[approval] "):
		out = append(out, p.errorEntry(text))
	case strings.HasPrefix(text, "[tokens] "):
		out = p.memoTokens(out, text)
	case m.tokens && strings.HasPrefix(text, "provider="):
	case text == memoSetupPrompt:
		msg := "memo has no provider config (it printed its setup prompt: " + memoSetupPrompt + "); run memo once in a terminal to write its config.toml"
		out = append(out, p.errorEntry(memoSetupPrompt))
		p.final(Entry{}, false, "", msg)
		m.block = memoSetup
	case strings.HasPrefix(text, "Config written to "):
	default:
		m.block = memoText
		m.add(text)
		p.thinking() // the tool calls are over: this is the answer
	}
	return out
}

// add appends a line to the block's text, up to maxMemoText bytes.
func (m *memoState) add(line string) {
	if m.more > 0 || m.size+len(line) > maxMemoText {
		m.more += len(line) + 1
		return
	}
	m.lines = append(m.lines, line)
	m.size += len(line) + 1
}

// take returns the block's text and empties it.
func (m *memoState) take() string {
	text := strings.Join(m.lines, "\n")
	if m.more > 0 {
		text += fmt.Sprintf("\n…[%d more bytes]", m.more)
	}
	m.lines, m.size, m.more = m.lines[:0], 0, 0
	return text
}

// memoEndBlock ends the block being read: a user message becomes its
// entry, a text block the held text.
func (p *Parser) memoEndBlock(out []Entry) []Entry {
	m := &p.memo
	switch m.block {
	case memoUser:
		out = p.memoUserEntry(out)
	case memoText:
		if m.hasHeld {
			out = append(out, memoStray(m.held))
		}
		m.held, m.hasHeld = m.take(), true
	}
	m.block, m.blanks = memoNone, 0
	m.take()
	return out
}

// memoUserEntry emits the user message read so far; more lines of the same
// block (a message with two blank lines in it) become another entry.
func (p *Parser) memoUserEntry(out []Entry) []Entry {
	m := &p.memo
	if len(m.lines) == 0 {
		return out
	}
	text := m.take()
	p.boundary()
	p.thinking()
	return append(out, Entry{Kind: KindUser, Text: text})
}

// memoTokens ends the turn at "[tokens] prompt=<in> completion=<out>
// total=<sum>": the held text is the answer, or the error when it is one
// of Memo's failure texts.
func (p *Parser) memoTokens(out []Entry, text string) []Entry {
	m := &p.memo
	m.tokens = true
	e := Entry{InputTokens: memoCount(text, "prompt="), OutputTokens: memoCount(text, "completion=")}
	answer := m.held
	m.held, m.hasHeld = "", false
	p.boundary()
	if msg, failed := memoFailure(answer); failed {
		return append(out, p.final(e, false, answer, msg))
	}
	if answer != "" {
		out = append(out, p.text(answer))
	}
	return append(out, p.final(e, true, answer, ""))
}

// memoEnd ends Memo's output: what is still being read is emitted, the held
// text as the answer of a run cut short.
func (p *Parser) memoEnd(out []Entry) []Entry {
	out = p.memoEndBlock(out)
	m := &p.memo
	if m.hasTool {
		out = append(out, p.toolCall("", m.tool, ""))
		m.hasTool = false
	}
	if m.hasHeld {
		out = append(out, p.text(m.held))
		m.held, m.hasHeld = "", false
	}
	return out
}

// memoStray is the entry of a text block that is not the answer, cut as a
// malformed line is.
func memoStray(text string) Entry {
	if len(text) > MaxMalformedBytes {
		n := MaxMalformedBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n] + fmt.Sprintf("…[%d bytes]", len(text))
	}
	return Entry{Kind: KindUnknown, Text: text}
}

// memoFailure reports whether a final text of Memo says the turn failed,
// and the error to report: the text itself, or for a cancelled turn what
// happened.
func memoFailure(text string) (string, bool) {
	switch {
	case text == "":
		return "memo cancelled the turn without an answer", true
	case strings.HasPrefix(text, memoCancelled):
		return "memo cancelled the turn: a tool was denied approval (" + text + ")", true
	}
	for _, prefix := range memoErrorPrefixes {
		if strings.HasPrefix(text, prefix) {
			return text, true
		}
	}
	return "", false
}

// memoCount returns the number after key in a "[tokens]" line, 0 when
// missing.
func memoCount(text, key string) int64 {
	i := strings.Index(text, key)
	if i < 0 {
		return 0
	}
	digits := text[i+len(key):]
	if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
		digits = digits[:j]
	}
	n, _ := strconv.ParseInt(digits, 10, 64)
	return n
}

// memoErase removes the cursor codes Ink starts a line with when it erases
// its frame (erase line ESC[…K, cursor up ESC[…A, column ESC[…G) and
// reports whether there were any: the line starts a new block.
func memoErase(line []byte) ([]byte, bool) {
	erased := false
	for len(line) >= 3 && line[0] == 0x1b && line[1] == '[' {
		i := 2
		for i < len(line) && (line[i] >= '0' && line[i] <= '9' || line[i] == ';') {
			i++
		}
		if i == len(line) || (line[i] != 'K' && line[i] != 'A' && line[i] != 'G') {
			break
		}
		erased, line = true, line[i+1:]
	}
	return line, erased
}

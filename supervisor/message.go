package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Message is the text of a submission on its way in (SPEC §3, §10): in
// memory when the caller gave it as a string (NewMessage), or in a file of
// the run's folder when it was read from a stream (ReadMessage), so that a
// long message is never whole in the host's memory. The operation that
// takes it (SpawnMessage, SendMessage, QueueMessage) moves it to the
// submission's <seq>-<id>.msg file beside its log, and the child's stdin is
// fed from that file; an operation that fails discards it. A Message is
// used once.
type Message struct {
	text string // the trimmed message, when it was given as a string
	path string // the file of a message read from a stream; "" otherwise
	head string // messageHead: what memory, records and results keep
	size int    // the whole message's length in bytes
	// parts are the messages a joined message is made of (joinMessages),
	// text and path then unused.
	parts []*Message
}

// partSeparator is what joins the parts of a submission's message: the
// messages held for an agent and its own (SPEC §14), one blank line apart.
const partSeparator = "\n\n"

// joinMessages returns one message made of parts, in order, a blank line
// between two, for a submission that takes the messages held for its
// agent before its own (SPEC §14). It owns the parts from then on (Discard
// discards them); one part is returned as it is. Errors: the joined
// message is longer than MaxMessageBytes (the parts are left to the
// caller then).
func joinMessages(parts []*Message) (*Message, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	size := joinedSize(parts)
	if size > proto.MaxMessageBytes {
		return nil, errJoinTooLong(size)
	}
	var known strings.Builder // the text the parts' heads hold, up to the head's limit
	whole := true
	for i, p := range parts {
		if i > 0 && known.Len() <= journal.MaxMessageHead {
			known.WriteString(partSeparator)
		}
		h := p.head
		if proto.MessageCut(h) {
			h = h[:strings.LastIndex(h, "...[truncated: ")]
			whole = false
		}
		if known.Len() <= journal.MaxMessageHead {
			known.WriteString(h)
		}
	}
	prefix := known.String()
	head := prefix
	switch {
	case whole && size <= journal.MaxMessageHead:
	case len(prefix) > journal.MaxMessageHead:
		head = journal.HeadOf(prefix, size)
	default: // a cut part's head was all that is known: cut there (at a character: the "x")
		head = proto.MessageHead(prefix+"x", size, len(prefix))
	}
	return &Message{parts: parts, head: head, size: size}, nil
}

// NewMessage checks message (SPEC §3: trimmed; "message must not be empty";
// at most MaxMessageBytes) and returns it as a Message.
func NewMessage(message string) (*Message, error) {
	msg, err := checkMessage(message)
	if err != nil {
		return nil, err
	}
	return &Message{text: msg, head: journal.MessageHead(msg), size: len(msg)}, nil
}

// joinedSize is the length in bytes of parts joined (joinMessages).
func joinedSize(parts []*Message) int {
	size := len(partSeparator) * max(len(parts)-1, 0)
	for _, p := range parts {
		size += p.size
	}
	return size
}

// errJoinTooLong is the error of a submission whose message, the messages
// held for its agent and its own joined, would be size bytes, over
// MaxMessageBytes.
func errJoinTooLong(size int) error {
	return &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf(
		"the messages held for this agent and this one are %d bytes together, longer than the limit of %d (64 MiB); cancel held messages (u, subdash ctl cancel-queue) or put the task in a file and send its path",
		size, proto.MaxMessageBytes)}
}

// Head returns the message's first 4 KiB (whole characters) with a marker
// of its whole length when it is longer: what results and records show.
func (m *Message) Head() string { return m.head }

// Len returns the whole message's length in bytes.
func (m *Message) Len() int { return m.size }

// Discard removes the file of a message that no submission took (the
// files of a joined message's parts).
func (m *Message) Discard() {
	if m == nil {
		return
	}
	for _, p := range m.parts {
		p.Discard()
	}
	if m.path != "" {
		_ = os.Remove(m.path)
	}
}

// read returns the whole message. A message in memory is copied; that of
// a file is read from it (fs.ErrNotExist once keep moved it away).
func (m *Message) read() ([]byte, error) {
	if len(m.parts) > 0 {
		var b bytes.Buffer
		err := m.writeTo(&b)
		return b.Bytes(), err
	}
	if m.path == "" {
		return []byte(m.text), nil
	}
	return os.ReadFile(m.path)
}

// writeTo writes the whole message to w, a file's in chunks (never whole
// in memory), a joined message's parts with their separators.
func (m *Message) writeTo(w io.Writer) error {
	if len(m.parts) > 0 {
		for i, p := range m.parts {
			if i > 0 {
				if _, err := io.WriteString(w, partSeparator); err != nil {
					return err
				}
			}
			if err := p.writeTo(w); err != nil {
				return err
			}
		}
		return nil
	}
	if m.path == "" {
		_, err := io.WriteString(w, m.text)
		return err
	}
	f, err := os.Open(m.path)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	_, err = io.Copy(w, f)
	return err
}

// keep puts the whole message into the file path (a submission's message
// file): the file of a streamed message is renamed there, a message in
// memory is written. m itself does not change (Supervisor.Message may read
// it meanwhile); the caller lets go of it afterwards.
func (m *Message) keep(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if m.path != "" && len(m.parts) == 0 {
		return os.Rename(m.path, path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = m.writeTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		for _, p := range m.parts {
			p.Discard() // copied: their files go
		}
	}
	return err
}

// trailingRoom is how many bytes past MaxMessageBytes ReadMessage takes
// before it gives up on a stream: room for trailing white space, which
// trimming removes at the end.
const trailingRoom = 1 << 20

// ReadMessage reads a message from r to its end into a file of the run's
// folder (<run>/incoming/), never holding it whole in memory, with the
// rules of SPEC §3 that NewMessage applies to a string: invalid UTF-8
// becomes U+FFFD (one per invalid byte, as a JSON encoder makes it), and
// leading and trailing white space is trimmed. Errors: "message must not
// be empty"; a message longer than MaxMessageBytes; reading r; writing the
// file ("cannot keep the message in …; check --state-dir").
func (s *Supervisor) ReadMessage(r io.Reader) (*Message, error) {
	dir := filepath.Join(s.runDir, "incoming")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errKeepMessage(dir, err)
	}
	f, err := os.CreateTemp(dir, "*.msg")
	if err != nil {
		return nil, errKeepMessage(dir, err)
	}
	m := &Message{path: f.Name()}
	t := &trimmedFile{f: f}
	err = t.copyFrom(r)
	if err == nil {
		err = t.finish()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = errKeepMessage(m.path, cerr)
	}
	if err != nil {
		m.Discard()
		return nil, err
	}
	m.size = int(t.end)
	m.head = journal.HeadOf(string(t.prefix[:min(len(t.prefix), m.size)]), m.size)
	return m, nil
}

func errKeepMessage(path string, err error) error {
	return &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot keep the message in %s: %v; check --state-dir", path, err)}
}

// trimmedFile is a message being written to its file: the text after its
// leading white space, made valid UTF-8; end marks where its trailing white
// space begins, which finish cuts off.
type trimmedFile struct {
	f      *os.File
	size   int64  // bytes written
	end    int64  // offset just after the last character that is not white space
	prefix []byte // the first journal.MaxMessageHead+1 bytes, for the head
	valid  []byte // scratch of validUTF8
}

// copyFrom skips r's leading white space and writes the rest.
func (t *trimmedFile) copyFrom(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		c, _, err := br.ReadRune()
		if errors.Is(err, io.EOF) {
			return proto.ErrEmptyMessage()
		}
		if err != nil {
			return fmt.Errorf("reading the message: %v", err)
		}
		if !unicode.IsSpace(c) { // an invalid byte (U+FFFD) is not white space
			_ = br.UnreadRune()
			break
		}
	}
	buf := make([]byte, 64<<10)
	carried := 0 // bytes of an unfinished character kept at buf's start
	for {
		n, rerr := br.Read(buf[carried:])
		n += carried
		cut := n
		if rerr == nil {
			cut = wholeRunes(buf[:n])
		}
		if err := t.write(validUTF8(buf[:cut], &t.valid)); err != nil {
			return err
		}
		carried = copy(buf, buf[cut:n])
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("reading the message: %v", rerr)
		}
	}
}

// write appends p, which holds whole characters of valid UTF-8.
func (t *trimmedFile) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if t.size+int64(len(p)) > proto.MaxMessageBytes+trailingRoom {
		return proto.ErrMessageTooLong(proto.MaxMessageBytes, false)
	}
	if room := journal.MaxMessageHead + 1 - len(t.prefix); room > 0 {
		t.prefix = append(t.prefix, p[:min(room, len(p))]...)
	}
	if _, err := t.f.Write(p); err != nil {
		return errKeepMessage(t.f.Name(), err)
	}
	i := len(p)
	for i > 0 {
		c, n := utf8.DecodeLastRune(p[:i])
		if !unicode.IsSpace(c) {
			break
		}
		i -= n
	}
	if i > 0 {
		t.end = t.size + int64(i)
	}
	t.size += int64(len(p))
	return nil
}

// finish cuts the trailing white space off and checks the length.
func (t *trimmedFile) finish() error {
	if t.end > proto.MaxMessageBytes {
		return proto.ErrMessageTooLong(t.end, true)
	}
	if err := t.f.Truncate(t.end); err != nil {
		return errKeepMessage(t.f.Name(), err)
	}
	return nil
}

// wholeRunes returns how much of b ends on a character boundary: b without
// the first bytes of a character that the next read completes.
func wholeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i > len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// validUTF8 returns b with each byte that is not part of valid UTF-8
// replaced by U+FFFD, in *scratch when something is replaced.
func validUTF8(b []byte, scratch *[]byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := (*scratch)[:0]
	for len(b) > 0 {
		c, n := utf8.DecodeRune(b)
		if c == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	*scratch = out
	return out
}

// feedMessage returns the stdin feed of a submission (SPEC §4): the message
// read from its file, then a newline, then stdin is closed. The file is
// copied in small chunks (io.Copy's 32 KiB), so the message is never whole
// in the host's memory. A file that cannot be read is said in the
// submission's output (note) and the child gets an empty stdin.
func feedMessage(path string, note func(string)) func(io.WriteCloser) {
	return func(w io.WriteCloser) {
		defer func() {
			if err := w.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
				note(fmt.Sprintf("subdash: closing the agent's stdin: %v", err))
			}
		}()
		f, err := os.Open(path)
		if err != nil {
			note(fmt.Sprintf("subdash: cannot read the message from %s: %v; the agent got an empty stdin", path, err))
			return
		}
		defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
		// A child that exits without reading makes the write fail with
		// EPIPE, which is not an error of ours (SPEC §4).
		if _, err := io.Copy(w, f); err == nil {
			_, _ = io.WriteString(w, "\n")
		} else if !errors.Is(err, fs.ErrClosed) && !errors.Is(err, syscall.EPIPE) {
			note(fmt.Sprintf("subdash: writing the message to the agent's stdin: %v", err))
		}
	}
}

// checkMessage returns message without surrounding white space, or the
// error for an empty or too long one (SPEC §3).
func checkMessage(message string) (string, error) {
	msg := strings.TrimSpace(message)
	switch {
	case msg == "":
		return "", proto.ErrEmptyMessage()
	case len(msg) > proto.MaxMessageBytes:
		return "", proto.ErrMessageTooLong(int64(len(msg)), true)
	}
	return msg, nil
}

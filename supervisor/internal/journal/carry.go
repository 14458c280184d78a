package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"

	"github.com/subdash/subdash/supervisor/proto"
)

// Carrying records on (SPEC §10). A host's checkpoint holds every record
// it carries on, most of them exactly as the checkpoint it read has them
// (records of ended agents, whose restore changes nothing). Such a record
// is not encoded again: its bytes are copied from the journal it was read
// from (a 10,000-record checkpoint took a quarter of a start to encode).
// A record read from a checkpoint line remembers where its JSON is
// (source); replay forgets that as soon as an event changes the record
// (changed), and Carry keeps it only for a record that equals, field by
// field, what the host would write. What the next host reads is then
// what it would have read from a fresh encoding.

// source is where a record's JSON is on disk: n bytes at off in the
// journal at path.
type source struct {
	path string
	off  int64
	n    int
}

// changed is called by replay for every record it changes: its JSON on
// disk no longer says what it holds.
func changed(r *AgentRecord) {
	if r != nil {
		r.src = nil
	}
}

// Carry returns the record a checkpoint writes for an agent restored from
// read whose record is now now (the engine's record of the agent after
// restoring it): read itself when the two are equal in every field, so
// that its bytes are copied from the journal read (no encoding), else now.
func Carry(read, now *AgentRecord) *AgentRecord {
	if read == nil || read.src == nil || now == nil {
		return now
	}
	a, b := *read, *now
	a.src, b.src = nil, nil
	if reflect.DeepEqual(a, b) {
		return read
	}
	return now
}

// recordAt sets the source of ev's record, a checkpoint line read at off
// in the journal at path: the bytes of the line's "record" value.
func recordAt(ev Event, line []byte, path string, off int64) {
	if ev.Record == nil {
		return
	}
	start, end, ok := valueOf(line, "record")
	if !ok || line[start] != '{' {
		return
	}
	ev.Record.src = &source{path: path, off: off + int64(start), n: end - start}
}

// carrier writes the lines of carried records (see Carry) for WriteAll:
// the journals opened so far, the head of the lines of the time last
// written, a buffer to reuse.
type carrier struct {
	files map[string]*os.File
	at    proto.Time
	head  []byte // {"time":…,"event":"record"
	buf   []byte
}

// line returns ev's line with the bytes of its record read from its
// source in place of encoding it; ok false when ev is not a record event
// whose record has a source, or its bytes cannot be read back as they
// were (then the caller encodes it). A carried record's line holds its
// time, its agent id and the record, as restore writes it: nothing else
// of ev.
func (c *carrier) line(ev Event) (line []byte, ok bool) {
	r := ev.Record
	if ev.Event != "record" || r == nil || r.src == nil || ev.AgentID != r.AgentID {
		return nil, false
	}
	src := r.src
	f, open := c.files[src.path]
	if !open {
		var err error
		if f, err = os.Open(src.path); err != nil {
			f = nil
		}
		c.files[src.path] = f
	}
	if f == nil {
		return nil, false
	}
	if c.head == nil || !c.at.Equal(ev.Time.Time) {
		head := encode(Event{Time: ev.Time, Event: ev.Event}) // {"time":…,"event":"record"}\n
		c.at, c.head = ev.Time, head[:len(head)-2]
	}
	id, err := json.Marshal(r.AgentID)
	if err != nil {
		return nil, false
	}
	b := append(c.buf[:0], c.head...)
	b = append(append(append(b, `,"agent_id":`...), id...), `,"record":`...)
	at := len(b)
	b = slices.Grow(b, src.n+2)[:at+src.n]
	if _, err := f.ReadAt(b[at:], src.off); err != nil {
		return nil, false
	}
	// The journal is append-only; what was read must still be there: the
	// record of this agent.
	raw := b[at:]
	if !bytes.HasPrefix(raw, []byte(`{"agent_id":`)) || !bytes.HasPrefix(raw[len(`{"agent_id":`):], id) || raw[len(raw)-1] != '}' {
		return nil, false
	}
	b = append(b, "}\n"...)
	c.buf = b
	return b, true
}

// close closes the journals c opened.
func (c *carrier) close() {
	for _, f := range c.files {
		if f != nil {
			_ = f.Close() // read only: its Close cannot lose data
		}
	}
}

// valueOf returns where the value of key begins and ends in line, a JSON
// object (already decoded, so valid), looking at its own keys only (not
// those of the objects it holds).
func valueOf(line []byte, key string) (start, end int, ok bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return 0, 0, false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '"' {
			return 0, 0, false
		}
		k0 := i + 1
		i = skipValue(line, i)
		k := line[k0:max(k0, i-1)]
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != ':' {
			return 0, 0, false
		}
		v := skipSpace(line, i+1)
		i = skipValue(line, v)
		if i > len(line) || i <= v {
			return 0, 0, false
		}
		if string(k) == key {
			return v, i, true
		}
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != ',' {
			return 0, 0, false
		}
		i++
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value that begins at i
// (a string, an object, an array or a literal); len(b)+1 when it does not
// end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b) + 1
	}
	switch b[i] {
	case '"':
		open := i
		for i++; ; i++ {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				return len(b) + 1
			}
			i += j
			// escaped when after an odd number of backslashes
			k := i - 1
			for k > open && b[k] == '\\' {
				k--
			}
			if (i-1-k)%2 == 0 {
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b) + 1
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
		}
		return i
	}
}

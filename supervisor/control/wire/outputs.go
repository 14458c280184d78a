package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/proto"
)

// DecodeOutputs decodes the data of an EventOutputs event into o, which
// it resets first. A viewer of 1,000 agents takes about 30 of these a
// second, each naming the agents that printed in the frame: the shape json.Marshal gives an OutputsEvent is read here by hand, and
// anything else (a field a newer host added, a string with escapes, a
// number with a fraction) by json.Unmarshal, so what it returns is what
// json.Unmarshal would. last carries the output rates' newest time
// between calls (the agents of a batch mostly share it); the zero value
// is ready. It returns json.Unmarshal's error for data that is not JSON.
func DecodeOutputs(data []byte, o *OutputsEvent, last *LastTime) error {
	if plainOutputs {
		*o = OutputsEvent{}
		return json.Unmarshal(data, o)
	}
	d := outputsDecoder{b: data, last: last}
	out := o.Outputs[:0]
	if out, ok := d.event(out); ok {
		o.Outputs = out
		return nil
	}
	*o = OutputsEvent{}
	return json.Unmarshal(data, o)
}

// plainOutputs, set by SUBDASH_OUTPUTS_DECODER=json, decodes every
// outputs event with json.Unmarshal: the plain code, for BENCHMARKS.md's
// comparison.
var plainOutputs = os.Getenv("SUBDASH_OUTPUTS_DECODER") == "json"

// LastTime is the last time DecodeOutputs parsed, by its JSON text; the
// zero value is ready.
type LastTime struct {
	text []byte
	t    proto.Time
}

// outputsDecoder reads one OutputsEvent from b at i; each method reports
// false at the first byte it does not expect.
type outputsDecoder struct {
	b    []byte
	i    int
	last *LastTime
}

func (d *outputsDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// is skips white space and then c, reporting whether c was there.
func (d *outputsDecoder) is(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// lit skips white space and then s, reporting whether s was there.
func (d *outputsDecoder) lit(s string) bool {
	d.ws()
	if bytes.HasPrefix(d.b[d.i:], []byte(s)) {
		d.i += len(s)
		return true
	}
	return false
}

// raw returns the bytes of a string without escapes, quotes left out.
func (d *outputsDecoder) raw() ([]byte, bool) {
	if !d.is('"') {
		return nil, false
	}
	for j := d.i; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			s := d.b[d.i:j]
			d.i = j + 1
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false // escapes and UTF-8 (json.Unmarshal replaces invalid bytes)
		}
	}
	return nil, false
}

// str reads a string as json.Unmarshal does: its bytes when it holds no
// escape and is valid UTF-8, else the string json.Unmarshal makes of it
// (escapes, invalid bytes replaced).
func (d *outputsDecoder) str() (string, bool) {
	if !d.is('"') {
		return "", false
	}
	start, plain := d.i, true
	for j := d.i; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '\\':
			plain = false
			j++ // the escaped byte, a quote too
		case c < 0x20:
			return "", false
		case c == '"':
			d.i = j + 1
			if s := d.b[start:j]; plain && utf8.Valid(s) {
				return string(s), true
			}
			var s string
			err := json.Unmarshal(d.b[start-1:j+1], &s)
			return s, err == nil
		}
	}
	return "", false
}

// int reads an integer without fraction or exponent.
func (d *outputsDecoder) int() (int64, bool) {
	d.ws()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	start := d.i
	var n int64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		if n > (1<<63-1)/10-1 {
			return 0, false // near overflow: json.Unmarshal says what it says
		}
		n = n*10 + int64(d.b[d.i]-'0')
		d.i++
	}
	if d.i == start || (d.b[start] == '0' && d.i-start > 1) {
		return 0, false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// object reads an object, calling field with each key; field reads the
// value.
func (d *outputsDecoder) object(field func(key []byte) bool) bool {
	if !d.is('{') {
		return false
	}
	if d.is('}') {
		return true
	}
	for {
		k, ok := d.raw()
		if !ok || !d.is(':') || !field(k) {
			return false
		}
		if d.is('}') {
			return true
		}
		if !d.is(',') {
			return false
		}
	}
}

func (d *outputsDecoder) event(out []OutputEvent) ([]OutputEvent, bool) {
	seen := false
	ok := d.object(func(k []byte) bool {
		if string(k) != "outputs" || seen {
			return false
		}
		seen = true
		if d.lit("null") {
			out = nil
			return true
		}
		if !d.is('[') {
			return false
		}
		if d.is(']') {
			return true
		}
		for {
			out = append(out, OutputEvent{})
			if !d.output(&out[len(out)-1]) {
				return false
			}
			if d.is(']') {
				return true
			}
			if !d.is(',') {
				return false
			}
		}
	})
	if !seen {
		out = nil // as a reset OutputsEvent holds
	}
	d.ws()
	return out, ok && d.i == len(d.b)
}

func (d *outputsDecoder) output(o *OutputEvent) bool {
	if d.lit("null") {
		return true
	}
	return d.object(func(k []byte) bool {
		switch string(k) {
		case "agent_id":
			s, ok := d.raw()
			o.AgentID = string(s)
			return ok
		case "seq":
			n, ok := d.int()
			o.Seq = int(n)
			return ok && int64(o.Seq) == n
		case "output":
			return d.counts(&o.Output)
		case "now":
			s, ok := d.str()
			o.Now = s
			return ok
		case "output_rate":
			if d.lit("null") {
				o.Rate = nil
				return true
			}
			o.Rate = &proto.OutputRate{}
			return d.rate(o.Rate)
		}
		return false
	})
}

func (d *outputsDecoder) counts(c *proto.OutputCounts) bool {
	return d.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "first_line":
			c.FirstLine, ok = d.int()
		case "lines":
			c.Lines, ok = d.int()
		case "first_entry":
			c.FirstEntry, ok = d.int()
		case "entries":
			c.Entries, ok = d.int()
		case "evicted":
			switch {
			case d.lit("true"):
				c.Evicted, ok = true, true
			case d.lit("false"):
				c.Evicted, ok = false, true
			}
		}
		return ok
	})
}

func (d *outputsDecoder) rate(r *proto.OutputRate) bool {
	return d.object(func(k []byte) bool {
		switch string(k) {
		case "bucket_seconds":
			n, ok := d.int()
			r.BucketSeconds = int(n)
			return ok && int64(r.BucketSeconds) == n
		case "newest":
			return d.time(&r.Newest)
		case "bytes":
			if !d.is('[') {
				return false
			}
			for k := range r.Bytes {
				n, ok := d.int()
				if !ok {
					return false
				}
				r.Bytes[k] = n
				if k < len(r.Bytes)-1 && !d.is(',') {
					return false
				}
			}
			return d.is(']') // more or fewer than RateBuckets: json.Unmarshal's way
		}
		return false
	})
}

// time reads a time as proto.Time's UnmarshalJSON does, parsing a text
// once for the calls that follow while it stays the same.
func (d *outputsDecoder) time(t *proto.Time) bool {
	if d.lit("null") {
		*t = proto.Time{}
		return true
	}
	start := d.i
	d.ws()
	if _, ok := d.raw(); !ok {
		return false
	}
	text := bytes.TrimLeft(d.b[start:d.i], " \t\n\r")
	if d.last != nil && d.last.text != nil && bytes.Equal(text, d.last.text) {
		*t = d.last.t
		return true
	}
	if err := t.UnmarshalJSON(text); err != nil {
		return false // json.Unmarshal gives the error
	}
	if d.last != nil {
		d.last.text, d.last.t = append(d.last.text[:0], text...), *t
	}
	return true
}

package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/subdash/subdash/supervisor/proto"
)

// writeList answers GET /v1/agents with res, encoded one summary at a
// time into a buffered writer on w: the body is the bytes writeJSON
// writes (TestListStreamedAsOne), but a list of 10,000 agents (3.9 MB of
// JSON) is never whole in memory, nor is the buffer that grows to hold it
// (issue 27: the first list after a restore of 10,000 records held the
// host's memory up by 20 MB and more).
func writeList(w http.ResponseWriter, res proto.ListResult) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	_ = encodeList(bw, res) // the client went away: nobody to tell
	_ = bw.Flush()
}

// mustEncode appends v's JSON to b, without escaping <, > and & (as
// wire.Marshal), and a newline.
func mustEncode(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// encodeList writes res to w as wire.Marshal encodes it, then a newline.
func encodeList(w io.Writer, res proto.ListResult) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // escaping HTML, as proto.Summary's MarshalJSON (json.Marshal)
	put := func(encode func() error) error {
		b.Reset()
		if err := encode(); err != nil {
			panic(fmt.Sprintf("control: encoding the list: %v", err))
		}
		_, err := w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		return err
	}
	if res.Agents == nil {
		if _, err := io.WriteString(w, `{"agents":null`); err != nil {
			return err
		}
	} else {
		if _, err := io.WriteString(w, `{"agents":[`); err != nil {
			return err
		}
		for i := range res.Agents {
			if i > 0 {
				if _, err := io.WriteString(w, ","); err != nil {
					return err
				}
			}
			if err := put(func() error { return res.Agents[i].WriteJSON(enc) }); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "]"); err != nil {
			return err
		}
	}
	if res.Failure != "" {
		if _, err := io.WriteString(w, `,"failure":`); err != nil {
			return err
		}
		if err := put(func() error { return mustEncode(&b, res.Failure) }); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "}\n")
	return err
}

package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// ListResult is the result of list (SPEC §3) on the control socket, in
// `subdash ctl list` and in the MCP tool list_agents: every agent's summary,
// oldest first, under "agents" (an object, so that it can be an MCP tool's
// structured content).
type ListResult struct {
	Agents []Summary `json:"agents"`
	// Failure is the host's own (supervisor.Supervisor.Failure): its
	// journal could not be written, said also when there is no agent.
	Failure string `json:"failure,omitempty"`
}

// MarshalJSON encodes the list as WriteJSON writes it, but the newline:
// each summary's messages cut at MaxJSONMessage.
func (r ListResult) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// WriteJSON writes r to w as list's JSON (SPEC §3) and a newline, a
// summary at a time: each with its messages cut at MaxJSONMessage and <,
// > and & escaped as json.Marshal escapes them, the failure unescaped. A
// list of thousands of agents (megabytes of JSON) is never whole in
// memory, nor is a buffer grown to hold it. Its error is w's.
func (r ListResult) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // escaping HTML, as json.Marshal does
	put := func(encode func() error) error {
		b.Reset()
		if err := encode(); err != nil {
			panic(fmt.Sprintf("proto: encoding the list: %v", err))
		}
		_, err := w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		return err
	}
	if r.Agents == nil {
		if _, err := io.WriteString(w, `{"agents":null`); err != nil {
			return err
		}
	} else {
		if _, err := io.WriteString(w, `{"agents":[`); err != nil {
			return err
		}
		for i := range r.Agents {
			if i > 0 {
				if _, err := io.WriteString(w, ","); err != nil {
					return err
				}
			}
			if err := put(func() error { return r.Agents[i].writeJSON(enc) }); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "]"); err != nil {
			return err
		}
	}
	if r.Failure != "" {
		if _, err := io.WriteString(w, `,"failure":`); err != nil {
			return err
		}
		if err := put(func() error {
			e := json.NewEncoder(&b)
			e.SetEscapeHTML(false)
			return e.Encode(r.Failure)
		}); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "}\n")
	return err
}

package appserver

import (
	"encoding/json"
	"strings"
)

// Request ids. JSON-RPC lets a client choose its ids; subdash's name the
// request they belong to, "<method>#<tag>", so that a response read on its
// own (from the log file, long after the run) says what it answers: the
// transcript parser tells a refused turn/start of the submission's message
// (tag TagMessage) from a refused steer (tag TagSteer and the message id).

// The tags of request ids.
const (
	// TagMessage marks the requests that start the submission: initialize,
	// thread/start or thread/resume, and the turn/start of its message.
	TagMessage = "message"
	// TagSteer prefixes the tag of a steered message's turn/steer or
	// turn/start: "steer:<message id>".
	TagSteer = "steer:"
	// TagStop marks turn/interrupt.
	TagStop = "stop"
)

// RequestID is the id of a request of method with tag, as JSON.
func RequestID(method, tag string) json.RawMessage {
	b, _ := json.Marshal(method + "#" + tag) // a string: never fails
	return b
}

// ParseRequestID returns the method and tag of an id RequestID made; both
// "" for any other id (a number, another client's string).
func ParseRequestID(id json.RawMessage) (method, tag string) {
	var s string
	if json.Unmarshal(id, &s) != nil {
		return "", ""
	}
	method, tag, ok := strings.Cut(s, "#")
	if !ok || method == "" {
		return "", ""
	}
	return method, tag
}

// SteerOf returns the message id of a steer's tag, "" for another tag.
func SteerOf(tag string) string {
	id, ok := strings.CutPrefix(tag, TagSteer)
	if !ok {
		return ""
	}
	return id
}

// idKey is a request id of the app-server's own as a map key and as the
// request id subdash shows: its JSON text, quotes removed from a string.
func idKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// idMap is the transport's map of the ids of the client's requests, as
// written (raw JSON), to the ids the SDK sees: one fresh integer per request
// read. The SDK holds an id as an int64 or a string, so it would rewrite
// ids it cannot hold (12345678901234567890 answered as
// -9223372036854775808), and it keeps one call per id, so of two requests
// in flight with the same id only one would be answered and the other
// would hold the end of input for good. Through the map every request has
// an id of its own inside,
// and its answer goes out with the client's id byte for byte.
type idMap struct {
	mu        sync.Mutex
	last      int64
	raw       map[int64]json.RawMessage // internal id -> the client's, for each request in flight
	byKey     map[string][]int64        // idKey of the client's id -> its requests in flight, oldest first
	cancelled map[int64]bool            // requests in flight the client cancelled
}

func newIDMap() *idMap {
	return &idMap{raw: map[int64]json.RawMessage{}, byKey: map[string][]int64{}, cancelled: map[int64]bool{}}
}

// in takes a request of the client's with id raw and returns the id the SDK
// is to see.
func (m *idMap) in(raw json.RawMessage) jsonrpc.ID {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last++
	m.raw[m.last] = bytes.Clone(raw)
	k := idKey(raw)
	m.byKey[k] = append(m.byKey[k], m.last)
	id, _ := jsonrpc.MakeID(float64(m.last)) // an int64 id (the SDK's package makes it from a JSON number); exact below 2^53
	return id
}

// cancel marks every request in flight with the client's id raw as
// cancelled and returns their internal ids (none when all were answered).
func (m *idMap) cancel(raw json.RawMessage) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.byKey[idKey(raw)]
	for _, id := range ids {
		m.cancelled[id] = true
	}
	return append([]int64(nil), ids...)
}

// out takes the answer to internal id id and returns the client's id, and
// whether the client cancelled the request (its answer is not written: MCP
// cancellation says the receiver should not respond). ok is false for an id
// the map did not give out.
func (m *idMap) out(id jsonrpc.ID) (raw json.RawMessage, cancelled, ok bool) {
	n, isInt := id.Raw().(int64)
	if !isInt {
		return nil, false, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	raw, ok = m.raw[n]
	if !ok {
		return nil, false, false
	}
	cancelled = m.cancelled[n]
	delete(m.raw, n)
	delete(m.cancelled, n)
	k := idKey(raw)
	rest := m.byKey[k]
	for i, v := range rest {
		if v == n {
			rest = append(rest[:i:i], rest[i+1:]...)
			break
		}
	}
	if len(rest) == 0 {
		delete(m.byKey, k)
	} else {
		m.byKey[k] = rest
	}
	return raw, cancelled, true
}

// idKey is the compact JSON of id: two ids are the same request's when
// their keys are equal ("id": 7 and "id":7).
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// withID returns data, the encoding of an answer whose id is internal,
// with the client's id raw in its place. The SDK writes the id right after
// "jsonrpc"; should it not, the answer is decoded and written again.
func withID(data []byte, internal int64, raw json.RawMessage) []byte {
	head := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(internal, 10))
	if bytes.HasPrefix(data, head) && len(data) > len(head) && (data[len(head)] == ',' || data[len(head)] == '}') {
		n := len(`{"jsonrpc":"2.0","id":`)
		out := make([]byte, 0, len(data)-len(head)+n+len(raw))
		out = append(out, data[:n]...)
		out = append(out, raw...)
		return append(out, data[len(head):]...)
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return data
	}
	members["id"] = raw
	if again, err := json.Marshal(members); err == nil {
		return again
	}
	return data
}

// cancelledParams is the params of notifications/cancelled naming the
// internal id id, for the SDK.
func cancelledParams(id int64) json.RawMessage {
	return json.RawMessage(`{"requestId":` + strconv.FormatInt(id, 10) + `}`)
}

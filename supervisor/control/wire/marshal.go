package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Marshal encodes v, whose types all encode without error, as the
// control socket's bodies and events carry it: without escaping <, > and &
// (json.Marshal turns each into 6 bytes, \u003c: messages of code or HTML
// would grow six-fold on the way to the body limit, and answers would be
// harder to read). It panics when v does not encode.
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("wire: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

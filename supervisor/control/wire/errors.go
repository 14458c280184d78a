package wire

import (
	"net/http"

	"github.com/subdash/subdash/supervisor/proto"
)

// ErrorBody is the body of every error answer of the control socket.
type ErrorBody struct {
	Error string          `json:"error"` // the spec's message
	Code  proto.ErrorCode `json:"code"`
}

// CodeForbidden is the code of the answer to a connection from another
// user; it is not an operation's error, so proto does not hold it.
const CodeForbidden proto.ErrorCode = "forbidden"

// Status is the HTTP status of an error answer with code: 400 invalid,
// 404 not found, 409 for a state that refuses the operation (busy,
// closed, not running, …), 413 too large, 429 limit, 503 shutdown, 403
// another user or nesting refused, 500 for a code it does not know.
func Status(code proto.ErrorCode) int {
	switch code {
	case proto.CodeInvalid:
		return http.StatusBadRequest
	case proto.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case proto.CodeNotFound:
		return http.StatusNotFound
	case proto.CodeLimit:
		return http.StatusTooManyRequests
	case proto.CodeBusy, proto.CodeClosed, proto.CodeNotRunning, proto.CodeNotPending, proto.CodeNoQueue, proto.CodeExists, proto.CodeBudget:
		return http.StatusConflict
	case proto.CodeShutdown:
		return http.StatusServiceUnavailable
	case CodeForbidden, proto.CodeNested:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

package supervisor

import (
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
)

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

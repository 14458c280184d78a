package control

import (
	"errors"
	"fmt"
	"time"
)

// NotServingError is returned by a Client when nothing listens on its
// socket: no dashboard and no `subdash serve` runs for the directory.
type NotServingError struct {
	Dir    string // the working directory whose socket was tried; "" when the socket was given
	Socket string // the control socket path
}

// Error says so and what to do.
func (e *NotServingError) Error() string {
	if e.Dir == "" {
		return fmt.Sprintf("no subdash is serving on socket %s; start subdash or subdash serve with --socket %s", e.Socket, e.Socket)
	}
	return fmt.Sprintf("no subdash is serving %s (socket %s); start subdash or subdash serve", e.Dir, e.Socket)
}

// NoAnswerError is returned by a Client when the host accepted the
// connection but did not answer within the call's deadline (SPEC §6): it is
// stopped (SIGSTOP), hung, or not a subdash.
type NoAnswerError struct {
	Socket string        // the control socket path
	PID    int           // the process listening on it (SO_PEERCRED); 0 when unknown
	After  time.Duration // how long the client waited
}

// Error names the socket and the process, and what to check.
func (e *NoAnswerError) Error() string {
	if e.PID <= 0 {
		return fmt.Sprintf("the process serving %s accepted the connection but did not answer within %s; it is stopped, hung, or not a subdash",
			e.Socket, e.After)
	}
	return fmt.Sprintf("subdash (pid %d) serving %s accepted the connection but did not answer within %s; it is stopped or hung (ps -o stat= -p %d shows T when stopped; kill -CONT %d resumes it)",
		e.PID, e.Socket, e.After, e.PID, e.PID)
}

// errNoAnswer is the cause of a call's context when its deadline passed.
var errNoAnswer = errors.New("no answer within the deadline")

// errStreamEnded is returned inside SSE when the host closed the stream.
var errStreamEnded = errors.New("stream ended")

// StoppedError is returned by SSE when the host closed the event stream:
// it stopped serving (quit, SIGTERM) or died.
type StoppedError struct {
	Socket string
	PID    int
}

// Error says the host stopped serving.
func (e *StoppedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("the subdash host (pid %d) stopped serving %s", e.PID, e.Socket)
	}
	return fmt.Sprintf("the subdash host stopped serving %s", e.Socket)
}

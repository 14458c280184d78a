package client

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
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
	// Program is the listener's program name (/proc/PID/comm), "" when
	// unknown; Stopped, that it was stopped (state T) when the deadline
	// passed. Both are read when the error is made (newNoAnswer).
	Program string
	Stopped bool
	// Sent: the call asked for a change (an operation, not a read), which
	// the host may still carry out once it answers again.
	Sent bool
	// Answers: a fresh request made when the deadline passed (GET
	// /v1/info, bounded by ProbeTimeout) was answered, in ProbeTook: the
	// host is not hung, it left this one call without an answer.
	Answers   bool
	ProbeTook time.Duration
	// Remote: the host is on another machine (a client over an ssh link,
	// Socket its target): PID is its pid there, what it said of itself,
	// and Program and Stopped are unknown (this machine's /proc is not
	// its).
	Remote bool
}

// newNoAnswer returns the NoAnswerError of the listener pid on socket, with
// what /proc says of it now, unless the host is remote (a pid there).
func newNoAnswer(socket string, pid int, after time.Duration, remote bool) *NoAnswerError {
	e := &NoAnswerError{Socket: socket, PID: pid, After: after, Remote: remote}
	if pid > 0 && !remote {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			e.Program = strings.TrimSpace(string(b))
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			// pid (comm) state …: comm may hold spaces and parentheses
			if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
				e.Stopped = b[i+2] == 'T' || b[i+2] == 't'
			}
		}
	}
	return e
}

// Error names the socket and the process, and what to check: a stopped
// process is resumed with SIGCONT; a running one that is not a subdash is
// named by its program. An operation sent says it may still be done.
func (e *NoAnswerError) Error() string {
	if e.Sent {
		return e.text() + "; the operation was sent and may still be carried out when it answers again: check with subdash ctl list before repeating it"
	}
	return e.text()
}

func (e *NoAnswerError) text() string {
	if e.Answers {
		return fmt.Sprintf("subdash serving %s did not answer this request within %s, though it answers others (a fresh request took %s); it may be overloaded: try again, and report it if it lasts",
			e.Socket, e.After, e.ProbeTook.Round(time.Millisecond))
	}
	if e.PID <= 0 {
		return fmt.Sprintf("the process serving %s accepted the connection but did not answer within %s; it is stopped, hung, or not a subdash",
			e.Socket, e.After)
	}
	if e.Remote {
		return fmt.Sprintf("subdash (pid %d there) serving %s accepted the connection but did not answer within %s; it is hung or stopped: there, ps -o stat= -p %d shows T when stopped and kill -CONT %d resumes it",
			e.PID, e.Socket, e.After, e.PID, e.PID)
	}
	who := fmt.Sprintf("subdash (pid %d) serving %s", e.PID, e.Socket)
	if e.Program != "" && !strings.HasPrefix(e.Program, "subdash") {
		who = fmt.Sprintf("the process serving %s (pid %d, %s)", e.Socket, e.PID, e.Program)
	}
	switch {
	case e.Stopped:
		return fmt.Sprintf("%s accepted the connection but did not answer within %s; it is stopped (SIGSTOP or ctrl+z): kill -CONT %d resumes it",
			who, e.After, e.PID)
	case e.Program != "" && !strings.HasPrefix(e.Program, "subdash"):
		return fmt.Sprintf("%s accepted the connection but did not answer within %s; it is running, so it is hung or not a subdash host: give the socket of a subdash (subdash ctl info names it)",
			who, e.After)
	}
	return fmt.Sprintf("%s accepted the connection but did not answer within %s; it is hung or stopped (ps -o stat= -p %d shows T when stopped; kill -CONT %d resumes it)",
		who, e.After, e.PID, e.PID)
}

// errNoAnswer is the cause of a call's context when its deadline passed.
var errNoAnswer = errors.New("no answer within the deadline")

// errStreamEnded is returned inside SSE when the host closed the stream.
var errStreamEnded = errors.New("stream ended")

// StoppedError is returned by SSE when the host closed the event stream
// and does not answer a fresh request: it stopped serving (quit, SIGTERM)
// or died; or when another host answers on the socket now (Successor).
type StoppedError struct {
	Socket string // the control socket, or the ssh target of a host there
	PID    int    // the host that stopped (its pid there, over ssh); 0 when unknown
	// Successor is the pid of the host that serves the socket now, 0 when
	// none does: a viewer of the old one attaches again to follow it.
	Successor int
}

// Error says the host stopped serving, and who serves the socket now.
func (e *StoppedError) Error() string {
	text := fmt.Sprintf("the subdash host stopped serving %s", e.Socket)
	if e.PID > 0 {
		text = fmt.Sprintf("the subdash host (pid %d) stopped serving %s", e.PID, e.Socket)
	}
	if e.Successor > 0 {
		text += fmt.Sprintf("; another subdash (pid %d) serves it now: attach again to follow that one", e.Successor)
	}
	return text
}

// ProtocolError is returned when the host speaks another version of the
// control socket protocol than this subdash (wire.Protocol), as its
// answers say (wire.ProtocolHeader, none from protocol 1), or, with Host
// 0, answers as no subdash does. It says which side to upgrade.
type ProtocolError struct {
	Socket string // the control socket, or the ssh target of a host there
	PID    int    // the host's pid (there, for a host over ssh); 0 when unknown
	Host   int    // the host's protocol; 0 when it answered as no subdash does
	Own    int    // this subdash's: wire.Protocol
	Answer string // with Host 0, what it answered
}

// Error names both protocols and the side to upgrade.
func (e *ProtocolError) Error() string {
	who := fmt.Sprintf("the subdash serving %s", e.Socket)
	if e.PID > 0 {
		who = fmt.Sprintf("the subdash (pid %d) serving %s", e.PID, e.Socket)
	}
	switch {
	case e.Host == 0:
		return fmt.Sprintf("what serves %s does not answer as a subdash host (GET /v1/info answered: %s); give the socket of a subdash host", e.Socket, e.Answer)
	case e.Host < e.Own:
		return fmt.Sprintf("%s speaks control protocol %d, older than this subdash's %d: upgrade the host (quit it and start it again with this subdash), or use the subdash that started it", who, e.Host, e.Own)
	}
	return fmt.Sprintf("%s speaks control protocol %d, newer than this subdash's %d: upgrade this subdash to the host's version, or use the subdash that started the host", who, e.Host, e.Own)
}

package client

// What the tests of package client_test (over a real host, which package
// client cannot import) see of the client's insides.

// Breakable dials a socket and cuts every connection it made on Cut.
type Breakable = breakable

// Pushed returns how many of r's window requests were answered from the
// windows its host pushed, and the name of r's event stream.
func Pushed(r *Remote) (served int, stream string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.push.served, r.push.stream
}

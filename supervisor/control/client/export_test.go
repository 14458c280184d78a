package client

import "time"

// What the tests of package client_test (over a real host, which package
// client cannot import) see of the client's insides.

// Breakable dials a socket and cuts every connection it made on Cut.
type Breakable = breakable

// ShortenAllLost makes a viewer of several hosts end once every host has
// been lost for d, until the test ends.
func ShortenAllLost(t interface{ Cleanup(func()) }, d time.Duration) {
	was := allLostFor
	allLostFor = d
	t.Cleanup(func() { allLostFor = was })
}

// Pushed returns how many of r's window requests were answered from the
// windows its host pushed, and the name of r's event stream.
func Pushed(r *Remote) (served int, stream string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.push.served, r.push.stream
}

// Package wire is the control socket's protocol (SPEC §6), declared once:
// the route table (Routes: method, path, operation, what each takes and
// answers), the request and answer bodies, the names of the server-sent
// events and their data, the error body and the HTTP status of each error
// code, and the decoder of the outputs event a viewer reads at every
// frame. The server (package server) and the client (package client)
// both speak it, and SPEC §6's route table is made from Routes
// (spec_test.go checks it).
//
// It imports no engine package: its values are proto's (the contract) and
// transcript's entries. testdata/wire.golden pins the JSON name of every
// field a route or event answers.
//
// The socket speaks HTTP/1.1 with JSON bodies on a Unix socket whose
// folder is mode 0700 and which is itself mode 0600; a connection from
// another user is answered 403 and closed (SO_PEERCRED). An error answers
// ErrorBody with the status Status gives its code; a client turns it back
// into *proto.Error, so every caller prints the same text.
package wire

// Package control gives programs the operations of the dashboard (SPEC §3)
// on the same supervisor: the control socket of SPEC §6 (Server), its
// client (Client, which implements the roles of package proto over the
// socket), a viewer's backend (Remote, SPEC §9), and the `subdash ctl`
// command line. The protocol they speak, its routes, bodies, events and
// errors, is package wire's. A wait whose client disconnects stops
// waiting at once.
package control

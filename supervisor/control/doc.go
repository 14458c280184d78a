// Package control serves the control socket of SPEC §6 (Server, over the
// engine), runs `subdash ctl` (Ctl) and `subdash bridge` (Bridge). The
// protocol is package wire's; its client and a viewer's backend are
// package client's. A wait whose client disconnects stops waiting at
// once.
package control

package sshlink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RelinkFor is how long a carrier tries to link again after its link
// dropped (SPEC §9: a viewer whose link drops reconnects for about 30 s,
// as after a laptop's sleep, then ends with the reason).
const RelinkFor = 30 * time.Second

// relinkPause is the pause between two tries: a host that refuses at
// once is not asked 30 times a second.
const relinkPause = time.Second

// hostStopWait is how long a carrier waits, when the host's event stream
// ended cleanly, for its ssh to end too: a killed sshd ends the stream
// a moment before it ends ssh, while a host that quit leaves ssh
// running.
const hostStopWait = time.Second

// Carrier keeps a target's host within reach: it owns the current Link
// and makes a new one when that one's ssh ended. Clients dial through it
// (DialContext), so that a client outlives its links. Safe for concurrent
// use.
type Carrier struct {
	t Target
	o Options

	mu        sync.Mutex
	link      *Link
	relinking bool // a new link is being made (one at a time)
	gone      bool // Close was called
	askFirst  bool // ForViewer: only Relink makes a new link
}

// Connect makes the first link to t (Dial, which may prompt when
// o.Terminal is set) and returns the carrier that keeps it; every later
// link runs without prompts (BatchMode), as the terminal belongs to the
// dashboard by then.
func Connect(ctx context.Context, t Target, o Options) (*Carrier, error) {
	l, err := Dial(ctx, t, o)
	if err != nil {
		return nil, err
	}
	o.Terminal, o.Batch = nil, true
	return &Carrier{t: t, o: o, link: l}, nil
}

// ForViewer makes c a viewer's carrier and returns it: a new link is
// made only by Relink, which says so on the dashboard ("reconnecting to
// ssh://…"), never silently by a dial; a dial through a link whose ssh
// ended fails with that link's error (Kind Down), which the viewer's
// event stream takes for a host it cannot reach, and so calls Relink.
func (c *Carrier) ForViewer() *Carrier {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.askFirst = true
	return c
}

// Name is the target as messages name it.
func (c *Carrier) Name() string { return c.t.Name() }

// Target returns the target the carrier reaches.
func (c *Carrier) Target() Target { return c.t }

// Link returns the current link.
func (c *Carrier) Link() *Link {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link
}

// DialContext connects to the host's socket through the current link, the
// connection being a new ssh channel. When the link's ssh has ended it
// first makes one new link (bounded by ctx), so a long-lived client (the
// MCP server's) carries on after a dropped connection; not for a viewer
// (ForViewer). The local end is dialled by the rule of trust (SPEC §6),
// as any control socket. Errors: *socket.UntrustedError, *Error
// (Kind Down when the link ended and a new one could not be made, with
// both reasons), or ctx's.
func (c *Carrier) DialContext(ctx context.Context) (net.Conn, error) {
	l := c.Link()
	c.mu.Lock()
	askFirst := c.askFirst
	c.mu.Unlock()
	if l.Down() && askFirst {
		return nil, l.Err()
	}
	if l.Down() {
		nl, err := c.relinkOnce(ctx, l)
		if err != nil {
			return nil, err
		}
		l = nl
	}
	conn, err := l.dialLocal(ctx)
	if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)) {
		if lerr := l.Err(); lerr != nil {
			return nil, lerr
		}
		return nil, &Error{Target: c.t.Name(), Kind: Down, Text: fmt.Sprintf("the local end of the ssh link (%s) refused the connection", l.Socket())}
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// relinkOnce replaces old, whose ssh ended, by a new link, unless another
// caller already did; it returns the link to use. While a new link is
// being made, other callers get an error at once rather than wait.
func (c *Carrier) relinkOnce(ctx context.Context, old *Link) (*Link, error) {
	if err := c.startRelink(old); err != nil || c.Link() != old {
		if err != nil {
			return nil, err
		}
		return c.Link(), nil
	}
	nl, err := Dial(ctx, c.t, c.o)
	if err != nil {
		c.endRelink(nil)
		return nil, &Error{Target: c.t.Name(), Kind: Down, Text: fmt.Sprintf("%s; linking again: %s", textOf(old.Err()), textOf(err))}
	}
	c.endRelink(nl)
	return nl, nil
}

// startRelink marks a new link as being made in place of old; an error
// when the carrier is closed or another one is being made. When old was
// replaced already, it marks nothing and returns nil (c.Link() != old).
func (c *Carrier) startRelink(old *Link) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.gone:
		return &Error{Target: c.t.Name(), Kind: Down, Text: "the ssh link is closed"}
	case c.relinking:
		return &Error{Target: c.t.Name(), Kind: Down, Text: "the ssh link dropped and is being made again"}
	case c.link != old:
		return nil
	}
	c.relinking = true
	return nil
}

// endRelink ends what startRelink began: nl, when not nil, becomes the
// link (the old one is closed), unless the carrier was closed meanwhile.
func (c *Carrier) endRelink(nl *Link) {
	c.mu.Lock()
	old, gone := c.link, c.gone
	c.relinking = false
	if nl != nil && !gone {
		c.link = nl
	}
	c.mu.Unlock()
	switch {
	case nl != nil && gone:
		nl.Close()
	case nl != nil:
		old.Close()
	}
}

// untargeted is err's message without the target's name it starts with.
func (c *Carrier) untargeted(err error) string {
	if err == nil {
		return "no try finished"
	}
	return strings.TrimPrefix(err.Error(), c.t.Name()+": ")
}

// textOf is an error's text without the target an *Error starts with.
func textOf(err error) string {
	var le *Error
	if errors.As(err, &le) {
		return le.Text
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// Relink is called when a client's event stream through the carrier
// ended with cause. hostStopped says the host closed the stream itself:
// then, unless the link's ssh ends within hostStopWait (a killed sshd
// ends the stream first), the host stopped and Relink returns false
// with no error: the caller ends with cause. Otherwise the link is at
// fault (its ssh ended, or the stream went silent, which ends the old
// ssh): Relink says "reconnecting to …" through say, then makes new
// links without prompts for up to RelinkFor, a try at most every second,
// saying each try; it returns true once one answers, or false and why it
// gave up (a lasting failure at once: a refused key, a missing subdash).
func (c *Carrier) Relink(ctx context.Context, cause error, hostStopped bool, say func(string)) (bool, error) {
	old := c.Link()
	if hostStopped && !old.Down() {
		select {
		case <-old.Done():
		case <-time.After(hostStopWait):
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if err := c.startRelink(old); err != nil {
		return false, err
	}
	if c.Link() != old {
		return true, nil // a dial made the new link meanwhile
	}
	why := "no answer through the ssh link: " + textOf(cause)
	if err := old.Err(); err != nil {
		why = textOf(err)
	}
	say(fmt.Sprintf("reconnecting to %s (%s)", c.t.Name(), why))
	old.Close() // a silent link's ssh may take 15 s to notice; SIGTERM ends it at once
	deadline := time.Now().Add(RelinkFor)
	var last error
	for try := 1; ; try++ {
		left := time.Until(deadline)
		if left <= 0 {
			c.endRelink(nil)
			return false, fmt.Errorf("gave up reconnecting to %s after %s: %s", c.t.Name(), RelinkFor, c.untargeted(last))
		}
		o := c.o
		o.ConnectTimeout = min(o.ConnectTimeout, left)
		tctx, cancel := context.WithTimeout(ctx, left+o.CallTimeout)
		l, err := Dial(tctx, c.t, o)
		cancel()
		if err == nil {
			c.endRelink(l)
			return true, nil
		}
		if ctx.Err() != nil {
			c.endRelink(nil)
			return false, ctx.Err()
		}
		last = err
		var le *Error
		if errors.As(err, &le) && le.Lasting() {
			c.endRelink(nil)
			return false, fmt.Errorf("reconnecting to %s failed: %s", c.t.Name(), c.untargeted(err))
		}
		say(fmt.Sprintf("reconnecting to %s, %s left: try %d failed: %s", c.t.Name(), time.Until(deadline).Round(time.Second), try, textOf(err)))
		select {
		case <-time.After(relinkPause):
		case <-ctx.Done():
			c.endRelink(nil)
			return false, ctx.Err()
		}
	}
}

// Close ends the current link; the carrier makes no new one.
func (c *Carrier) Close() {
	c.mu.Lock()
	l := c.link
	c.gone = true
	c.mu.Unlock()
	l.Close()
}

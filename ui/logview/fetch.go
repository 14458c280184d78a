package logview

// maxRequest bounds the items one Request asks for (the control socket's
// window route takes at most 100,000).
const maxRequest = 100_000

// SetBounds records the log's bounds as the owner's events tell them (the
// absolute number of the oldest item held and one past the newest): while
// paused it updates NewItems and keeps the top row on a trimmed log without
// a fetch. It renders again.
func (m *Model) SetBounds(first, total int64) {
	if first == m.first && total == m.total {
		return
	}
	if total > m.total || first != m.first {
		m.blocked = false
	}
	m.first, m.total = first, total
	m.Refresh()
}

// Changed says that the log's content changed (items arrived, the last
// one grew): what the pane holds of its end is stale, and a view that
// shows the end asks for it again.
func (m *Model) Changed() {
	m.changes++
	m.blocked = false
}

// Request returns the items the pane needs to draw and does not hold, and
// marks the request in flight: the pane asks for nothing more until its
// answer arrives through SetPage. ok is false when nothing is needed, or a
// request is in flight, or the last one failed and nothing changed since.
// Call it after every change of the pane (the owner does once per Update).
func (m *Model) Request() (Request, bool) {
	from, n, ok := m.need()
	if !ok {
		return Request{}, false
	}
	m.inFlight = true
	return Request{From: from, N: min(max(n, 1), maxRequest), gen: m.gen, at: m.changes}, true
}

// need computes the next request: the bottom of the log while following,
// else the view with half a screen either side (or the rows of a scroll
// still to make), fetched with a screen either side.
func (m *Model) need() (from int64, n int, ok bool) {
	if !m.open || m.height <= 0 || m.inFlight || m.blocked {
		return 0, 0, false
	}
	h := int64(m.height)
	fresh := m.fetched && m.heldAt == m.changes
	if m.st.Follow {
		if fresh && m.holds(max(m.first, m.total-h), m.total) {
			return 0, 0, false
		}
		return -1, 2 * m.height, true
	}
	top := m.st.Top.Item
	lo, hi := top-h/2, top+h+h/2
	if m.move < 0 {
		lo = top - int64(-m.move) - 1
	} else if m.move > 0 {
		hi = top + int64(m.move) + h + 1
	}
	lo, hi = max(lo, m.first), min(hi, m.total)
	if m.fetched && m.holds(lo, hi) && m.move == 0 && (fresh || hi < m.total) {
		return 0, 0, false
	}
	from = max(m.first, min(lo, top-h))
	to := max(hi, top+2*h)
	return from, int(max(to-from, h)), true
}

// holds reports whether the pane holds every item of [lo, hi).
func (m *Model) holds(lo, hi int64) bool {
	if lo >= hi {
		return true
	}
	return m.held.From <= lo && m.held.From+int64(len(m.held.Items)) >= hi
}

// item returns held item abs.
func (m *Model) item(abs int64) (Item, bool) {
	i := abs - m.held.From
	if i < 0 || i >= int64(len(m.held.Items)) {
		return Item{}, false
	}
	return m.held.Items[i], true
}

// heldEnd is one past the last held item.
func (m *Model) heldEnd() int64 { return m.held.From + int64(len(m.held.Items)) }

// SetPage takes the answer to req: the page, or the error of fetching it
// (kept in Err and shown by the owner; the pane asks again only after
// something changed). An answer for a log no longer shown is dropped. It
// finishes a scroll that waited for the page and renders again.
func (m *Model) SetPage(req Request, pg Page, err error) {
	if req.gen != m.gen || !m.open {
		return
	}
	m.inFlight = false
	if err != nil {
		m.err, m.blocked = err, true
		m.Refresh()
		return
	}
	m.err, m.fetched = nil, true
	pg.From = max(pg.From, pg.First)
	m.held, m.heldTail, m.heldAt = pg, req.From < 0, req.at
	m.first, m.total = pg.First, pg.Total
	if !m.st.Follow && m.st.Top.Item < m.first {
		m.st.Top = Pos{m.first, 0}
	}
	m.finishMove()
	m.Refresh()
}

// finishMove makes the part of a scroll that waited for items.
func (m *Model) finishMove() {
	n := m.move
	m.move = 0
	switch {
	case n < 0:
		p, rest := m.back(m.st.Top, -n)
		m.st.Top, m.move = p, -rest
	case n > 0:
		p, rest := m.forward(m.st.Top, n)
		if rest == 0 && m.rowsFrom(p, m.height+1) <= m.height {
			m.st.Follow = true
			return
		}
		m.st.Top, m.move = p, rest
	}
}

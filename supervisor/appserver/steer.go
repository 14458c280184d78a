package appserver

// Steering (SPEC §11 steer). A message steered while a turn runs goes as
// turn/steer with that turn as expectedTurnId; codex adds it to the turn
// and, at the turn's next step (a command's end, the next model call),
// starts a userMessage item for it carrying the message id as clientId:
// that item is the receipt, folded when it is in the turn that ran when
// the message was sent, next_turn when in a later one. codex refuses a
// turn/steer once the turn ended ("no active turn to steer"): the message
// then goes as turn/start, a turn of its own in the same process. One the
// running turn accepted but did not take before it ended goes as
// turn/start too, so that none waits for ever. A message steered before
// the message's turn began waits for its turn id.

// steer is one steered message.
type steer struct {
	text string
	// turn is the turn that ran when it was sent, "" between turns.
	turn string
	// waiting: sent before the message's turn began; it goes once that
	// turn's id is known.
	waiting bool
	// accepted is the turn that accepted its turn/steer.
	accepted string
	// started: it went as turn/start (its own turn, or a retry).
	started bool
	seen    bool // its userMessage item started: it has its receipt
	failed  bool // it could not be delivered
}

// outstanding reports whether the app-server may still take it.
func (st *steer) outstanding() bool { return !st.seen && !st.failed }

// Steer sends text, the steered message id, into the conversation: into
// the running turn, or as a turn of its own between turns. It reports
// false when it cannot reach the app-server (stopping, stdin closed); the
// receipt comes later from Line (EventTaken, or EventUndelivered).
func (d *Driver) Steer(id, txt string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.stopping {
		return false
	}
	st := &steer{text: txt, turn: d.turn}
	d.steers[id] = st
	d.order = append(d.order, id)
	switch {
	case !d.asked:
		st.waiting = true
	case d.turn != "":
		return d.send(MethodTurnSteer, TagSteer+id, turnParams{ThreadID: d.thread, ExpectedTurnID: d.turn,
			Input: text(txt), ClientUserMessageID: id})
	default:
		return d.startSteer(id, st)
	}
	return true
}

// startSteer sends steered message id as turn/start.
func (d *Driver) startSteer(id string, st *steer) bool {
	st.started = true
	return d.send(MethodTurnStart, TagSteer+id, turnParams{ThreadID: d.thread, Input: text(st.text), ClientUserMessageID: id})
}

// sendWaiting sends the messages steered before the message's turn began,
// now that it has an id.
func (d *Driver) sendWaiting() []Event {
	var out []Event
	for _, id := range d.order {
		st := d.steers[id]
		if !st.waiting {
			continue
		}
		st.waiting = false
		st.turn = d.turn
		ok := false
		if d.turn != "" {
			ok = d.send(MethodTurnSteer, TagSteer+id, turnParams{ThreadID: d.thread, ExpectedTurnID: d.turn,
				Input: text(st.text), ClientUserMessageID: id})
		} else {
			ok = d.startSteer(id, st)
		}
		if !ok {
			out = append(out, d.undelivered(id, st, "the app-server's stdin had closed"))
		}
	}
	return out
}

// steerAnswered handles the answer to the turn/steer of message id.
func (d *Driver) steerAnswered(id string, m Message) []Event {
	st := d.steers[id]
	if st == nil || !st.outstanding() {
		return nil
	}
	if m.Error == nil {
		var r SteerResult
		m.Body(&r)
		st.accepted = r.TurnID
		return nil
	}
	if st.started || d.stopping {
		return []Event{d.undelivered(id, st, "codex refused it: "+m.Error.Message)}
	}
	// the turn ended first, or takes no steering: a turn of its own
	if !d.startSteer(id, st) {
		return []Event{d.undelivered(id, st, "codex refused it ("+m.Error.Message+") and the app-server's stdin had closed")}
	}
	return nil
}

// steerStarted handles the answer to the turn/start of message id.
func (d *Driver) steerStarted(id string, m Message) []Event {
	st := d.steers[id]
	if st == nil || !st.outstanding() {
		return nil
	}
	if m.Error != nil {
		return []Event{d.undelivered(id, st, "codex refused it: "+m.Error.Message)}
	}
	var r TurnResult
	m.Body(&r)
	d.turnRuns(r.Turn)
	return nil
}

// steerSeen handles a userMessage item of message clientID starting in
// turn: the receipt.
func (d *Driver) steerSeen(clientID, turn string) []Event {
	st := d.steers[clientID]
	if st == nil || st.seen {
		return nil
	}
	st.seen, st.failed = true, false
	return []Event{{Kind: EventTaken, MessageID: clientID, Folded: st.turn != "" && turn == st.turn}}
}

// steerMissed sends, as turn/start, what turn accepted and did not take
// before it ended.
func (d *Driver) steerMissed(turn string) []Event {
	var out []Event
	for _, id := range d.order {
		st := d.steers[id]
		if st.accepted != turn || !st.outstanding() || st.started {
			continue
		}
		if !d.startSteer(id, st) {
			out = append(out, d.undelivered(id, st, "the app-server's stdin had closed"))
		}
	}
	return out
}

// undelivered marks message id as not delivered, with why.
func (d *Driver) undelivered(id string, st *steer, why string) Event {
	st.failed = true
	return Event{Kind: EventUndelivered, MessageID: id, Text: why}
}

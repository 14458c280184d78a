package supervisor

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// The state directory kept (SPEC §5, §10). A journal that misses events
// (a full disk) or whose file is gone (the state directory was removed
// under the host) is never silent and never left so: every stateCheck
// the host looks at its journal, and when it is due (journal.Writer.Due)
// or gone (Moved) it writes every record it holds in memory again (a
// checkpoint), making the run's folder and journal again first when they
// are gone, takes its host lock again (WhenStateRemade), and says on
// every screen what happened. A later host restores from that journal
// what this one held.

// stateCheck is how often a host looks at its journal.
const stateCheck = time.Second

// WhenStateRemade has fn called once the host made its state directory
// again after it was removed (the control socket takes its host lock
// again there). An error fn returns is said with the rest.
func (s *Supervisor) WhenStateRemade(fn func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remade = append(s.remade, fn)
}

// watchState looks at the journal every stateCheck until Shutdown, on a
// timer (no goroutine waits in between).
func (s *Supervisor) watchState() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateTimer = time.AfterFunc(stateCheck, func() {
		s.checkState(time.Now())
		s.mu.Lock()
		if !s.shutdown {
			s.stateTimer.Reset(stateCheck)
		}
		s.mu.Unlock()
	})
}

// checkState writes the journal again when its file is gone or it missed
// events and may write again, and says so.
func (s *Supervisor) checkState(now time.Time) {
	s.mu.Lock()
	done := s.shutdown
	recheck := s.logRechecks > 0
	if recheck {
		s.logRechecks--
	}
	s.mu.Unlock()
	if recheck && !done {
		s.checkLogs(nil)
	}
	switch {
	case done:
	case s.journal.Moved():
		s.stateRemoved(now)
	case s.journal.Due(now):
		failing := s.journal.Failure() != ""
		if err := s.journal.Checkpoint(s.checkpoint); err == nil && failing {
			s.warn("journal written again: " + s.journalPath() + " holds every record again (the events it missed are in its checkpoint); nothing of this host's agents is lost")
			s.publishAll()
		}
	}
}

// stateRemoved writes the journal again after the run's folder was
// removed: the folder, the journal with a checkpoint of every record,
// the host lock. A log file removed while its submission runs is that
// agent's failure (SPEC §5). It says once what it did, and when it
// cannot, what failed (it tries again every journal retry while the
// journal is due).
func (s *Supervisor) stateRemoved(now time.Time) {
	s.mu.Lock()
	first := !s.stateGone
	s.stateGone, s.logRechecks = true, logRechecks
	remade := s.remade
	var running []*submission
	for _, a := range s.order {
		if a.running != nil {
			running = append(running, a.running)
		}
	}
	s.mu.Unlock()
	if !first && !s.journal.Due(now) {
		return
	}
	logs := s.checkLogs(running)
	if err := s.journal.Checkpoint(s.checkpoint); err != nil {
		if first {
			s.warn(fmt.Sprintf("the state directory %s was removed under this host, and its journal cannot be made again (%v): this host's records will not be restored; check the folder's permissions, or quit and restart with a writable --state-dir", s.cfg.StateDir, err))
		}
		return
	}
	s.mu.Lock()
	s.stateGone = false
	n := len(s.order)
	s.mu.Unlock()
	msg := fmt.Sprintf("the state directory %s was removed under this host: made its run folder again and wrote the journal %s again from memory (%d agent record(s)), so a later host restores them", s.cfg.StateDir, s.journalPath(), n)
	for _, fn := range remade {
		if err := fn(); err != nil {
			msg += "; " + err.Error()
		} else {
			msg += "; took the host lock again"
		}
	}
	msg += "; the logs and messages written before are gone"
	if logs > 0 {
		msg += fmt.Sprintf(", and %d running submission(s) now show their output on screen only", logs)
	} else if len(running) > 0 {
		msg += "; a running submission whose log file went too says so on its row"
	}
	s.warn(msg)
	s.publishAll()
}

// logRechecks is how many looks after a removal of the state directory
// also look at the running submissions' log files: rm -rf takes a while,
// and a log file may still be there at the first.
const logRechecks = 5

// checkLogs fails the log of each submission in running (nil: every
// running one) whose file is gone (output.Output.CheckLog), and returns
// how many it failed.
func (s *Supervisor) checkLogs(running []*submission) int {
	if running == nil {
		s.mu.Lock()
		for _, a := range s.order {
			if a.running != nil {
				running = append(running, a.running)
			}
		}
		s.mu.Unlock()
	}
	n := 0
	for _, sub := range running {
		if sub.out.CheckLog() {
			n++
		}
	}
	return n
}

// checkpoint returns the events that hold every record of this host as
// it is now (journal.Writer.Checkpoint): each agent's record, the agents
// forgotten in this run, each session's root mailbox, even empty.
func (s *Supervisor) checkpoint() []journal.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := proto.Time{Time: time.Now()}
	evs := make([]journal.Event, 0, len(s.order)+len(s.forgotten)+len(s.roots)+1)
	for _, a := range s.order {
		evs = append(evs, journal.Event{Time: at, Event: "record", AgentID: a.id, Record: s.recordLocked(a)})
	}
	for _, id := range s.forgotten {
		evs = append(evs, journal.Event{Time: at, Event: "forgotten", AgentID: id})
	}
	held := map[string]bool{}
	for _, r := range s.rootRecordsLocked() {
		held[r.Session] = true
		evs = append(evs, journal.Event{Time: at, Event: "mailbox", Session: r.Session, Mailbox: r})
	}
	for id := range s.roots {
		if !held[id] { // emptied since an earlier line filled it
			evs = append(evs, journal.Event{Time: at, Event: "mailbox", Session: id, Mailbox: &journal.MailboxRecord{Session: id, Dir: s.cfg.Dir}})
		}
	}
	return append(evs, journal.Event{Time: at, Event: "checkpoint", Note: fmt.Sprintf("every record again: %d agent(s)", len(s.order))})
}

// journalPath is this run's journal.
func (s *Supervisor) journalPath() string { return filepath.Join(s.runDir, "journal.jsonl") }

// publishAll tells every front-end that every agent changed: the
// failure in their summaries ended.
func (s *Supervisor) publishAll() {
	s.mu.Lock()
	ids := make([]string, len(s.order))
	for i, a := range s.order {
		ids[i] = a.id
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.hub.Publish(proto.Change{AgentID: id, Agent: true})
	}
}

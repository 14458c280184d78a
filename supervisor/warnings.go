package supervisor

import "github.com/subdash/subdash/supervisor/proto"

// warn adds a warning found while running: Config().Warnings lists it from
// now on, and subscribers get it once in a Change.
func (s *Supervisor) warn(msg string) {
	s.mu.Lock()
	s.warnings = append(s.warnings, msg)
	s.mu.Unlock()
	s.hub.Publish(proto.Change{Warnings: []string{msg}})
}

// spaceChanged is told by the free-space floor that logging paused or
// resumed (SPEC §5): a warning on the host's screen and every viewer's
// (stderr for serve and mcp); each agent's log pane says it too where its
// output is held back.
func (s *Supervisor) spaceChanged(paused bool, why string) {
	if paused {
		s.warn("logging paused: " + why + "; the agents keep running and their output shows on screen, but it is not written to their log files until space returns (free some, or move --state-dir); the journal still writes")
		return
	}
	s.warn("logging resumed: the filesystem of " + s.cfg.StateDir + " has space again; each log pane and log file says how much output is missing")
}

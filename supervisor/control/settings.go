package control

import (
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/runner"
)

// Settings are a host's settings as GET /v1/config carries them under
// "config": the fields of its supervisor.Config under their Go names, the
// names /v1 has sent from the start (testdata/wire.golden). They are
// chosen one by one, so a field added to Config reaches viewers only when
// it is added here; Environ and Runner stay in the wire, always null (a
// host's environment and its runner are not a viewer's). A viewer compares
// the host flags it was given with them (SPEC §9) and builds the
// dashboard's proto.HostConfig from them (Remote.HostConfig).
type Settings struct {
	Command       string
	CommandSource supervisor.CommandSource
	CommandShown  string
	Executable    string
	Preset        *supervisor.Preset
	MaxAgents     int
	Dir           string
	StateDir      string
	Socket        string
	Grace         time.Duration
	Scrollback    int
	LineMemory    int64
	AllowNested   bool
	MaxDepth      int
	Timeout       time.Duration
	NotifyCommand string
	CollabTools   bool
	Environ       []string  // always null
	Runner        *struct{} // always null
	RunnerName    string
	Kube          runner.KubeOptions
	Warnings      []string
	Notes         []string
	RestoreWindow time.Duration
	LogRetention  time.Duration
	MaxLogSize    int64 // --max-log-size in bytes; 0 from a host without a cap or older than it
	TrackChanges  bool
	// StallAfter, MaxBudgetUSD and FleetBudgetUSD are --stall-after,
	// --max-budget-usd and --fleet-budget-usd (SPEC §11); 0 from a host
	// older than them.
	StallAfter                   time.Duration
	MaxBudgetUSD, FleetBudgetUSD float64
}

// SettingsOf returns the Settings of c, as a host sends them.
func SettingsOf(c supervisor.Config) Settings {
	return Settings{
		Command: c.Command, CommandSource: c.CommandSource, CommandShown: c.CommandShown, Executable: c.Executable,
		Preset: c.Preset, MaxAgents: c.MaxAgents, Dir: c.Dir, StateDir: c.StateDir, Socket: c.Socket,
		Grace: c.Grace, Scrollback: c.Scrollback, LineMemory: c.LineMemory, AllowNested: c.AllowNested, MaxDepth: c.MaxDepth,
		Timeout: c.Timeout, NotifyCommand: c.NotifyCommand, CollabTools: c.CollabTools,
		RunnerName: c.RunnerName, Kube: c.Kube, Warnings: c.Warnings, Notes: c.Notes,
		RestoreWindow: c.RestoreWindow, LogRetention: c.LogRetention, MaxLogSize: c.MaxLogSize, TrackChanges: c.TrackChanges,
		StallAfter: c.StallAfter, MaxBudgetUSD: c.Budget.Agent, FleetBudgetUSD: c.Budget.Fleet,
	}
}

// Shown returns the agent command as screens show it (supervisor.Config's
// Shown): CommandShown, or Command when that is empty.
func (s Settings) Shown() string {
	if s.CommandShown != "" {
		return s.CommandShown
	}
	return s.Command
}

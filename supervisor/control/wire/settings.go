package wire

import "time"

// Settings are a host's settings as Config carries them under "config":
// what a viewer shows (proto.HostConfig) and compares the host flags it
// was given with (SPEC §9). The host fills them in from its configuration
// one by one (server.SettingsOf), so a setting reaches viewers only when
// it is added here.
type Settings struct {
	Command       string
	CommandSource string // the step of SPEC §2 that chose Command: "--command", "memo on PATH", …
	CommandShown  string
	Executable    string
	Preset        *Preset
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
	Kube          Kube
	Warnings      []string
	Notes         []string
	RestoreWindow time.Duration
	LogRetention  time.Duration
	MaxLogSize    int64 // --max-log-size in bytes; 0 without a cap
	TrackChanges  bool
	// StallAfter, MaxBudgetUSD and FleetBudgetUSD are --stall-after,
	// --max-budget-usd and --fleet-budget-usd (SPEC §11).
	StallAfter                   time.Duration
	MaxBudgetUSD, FleetBudgetUSD float64
}

// Preset is the host's preset (SPEC §8): its name, --preset-args, the
// CLI's output format ("" for plain text) and whether it relays tool
// permission requests (--approvals, SPEC §12).
type Preset struct {
	Name      string
	Args      string
	Format    string
	Approvals bool
}

// Kube is the host's --kube-* flags (SPEC §13).
type Kube struct {
	Namespace    string
	Image        string
	Node         string
	Env          []string
	Secrets      []string
	StartTimeout time.Duration
}

// Shown returns the agent command as screens show it: CommandShown, or
// Command when that is empty.
func (s Settings) Shown() string {
	if s.CommandShown != "" {
		return s.CommandShown
	}
	return s.Command
}

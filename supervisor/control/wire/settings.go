package wire

import "time"

// Settings are a host's settings as Config carries them under "config":
// what a viewer shows (proto.HostConfig) and compares the host flags it
// was given with (SPEC §9). The host fills them in from its configuration
// one by one (server.SettingsOf), so a setting reaches viewers only when
// it is added here. Durations are in nanoseconds (the names end in _ns).
type Settings struct {
	Command string `json:"command"`
	// CommandSource is the step of SPEC §2 that chose Command: "--command",
	// "memo on PATH", …; CommandShown the command as screens show it.
	CommandSource string  `json:"command_source"`
	CommandShown  string  `json:"command_shown,omitempty"`
	Executable    string  `json:"executable"`
	Preset        *Preset `json:"preset,omitempty"`
	MaxAgents     int     `json:"max_agents"`
	Dir           string  `json:"dir"`
	StateDir      string  `json:"state_dir"`
	Socket        string  `json:"socket"`
	// Grace is the grace period between SIGTERM and SIGKILL.
	Grace         time.Duration `json:"grace_ns"`
	Scrollback    int           `json:"scrollback"`  // lines
	LineMemory    int64         `json:"line_memory"` // bytes
	AllowNested   bool          `json:"allow_nested"`
	MaxDepth      int           `json:"max_depth"`
	Timeout       time.Duration `json:"timeout_ns"`
	NotifyCommand string        `json:"notify_command,omitempty"`
	CollabTools   bool          `json:"collab_tools"`
	RunnerName    string        `json:"runner"`
	Kube          Kube          `json:"kube"`
	Warnings      []string      `json:"warnings,omitempty"`
	Notes         []string      `json:"notes,omitempty"`
	RestoreWindow time.Duration `json:"restore_window_ns"`
	LogRetention  time.Duration `json:"log_retention_ns"`
	MaxLogSize    int64         `json:"max_log_size"` // --max-log-size in bytes; 0 without a cap
	TrackChanges  bool          `json:"track_changes"`
	// StallAfter, MaxBudgetUSD and FleetBudgetUSD are --stall-after,
	// --max-budget-usd and --fleet-budget-usd (SPEC §11).
	StallAfter     time.Duration `json:"stall_after_ns"`
	MaxBudgetUSD   float64       `json:"max_budget_usd,omitempty"`
	FleetBudgetUSD float64       `json:"fleet_budget_usd,omitempty"`
}

// Preset is the host's preset (SPEC §8): its name, --preset-args, the
// CLI's output format ("" for plain text) and whether it relays tool
// permission requests (--approvals, SPEC §12).
type Preset struct {
	Name      string `json:"name"`
	Args      string `json:"args,omitempty"`
	Format    string `json:"format,omitempty"`
	Approvals bool   `json:"approvals,omitempty"`
}

// Kube is the host's --kube-* flags (SPEC §13).
type Kube struct {
	Namespace    string        `json:"namespace,omitempty"`
	Image        string        `json:"image,omitempty"`
	Node         string        `json:"node,omitempty"`
	Env          []string      `json:"env,omitempty"`
	Secrets      []string      `json:"secrets,omitempty"`
	StartTimeout time.Duration `json:"start_timeout_ns,omitempty"`
}

// Shown returns the agent command as screens show it: CommandShown, or
// Command when that is empty.
func (s Settings) Shown() string {
	if s.CommandShown != "" {
		return s.CommandShown
	}
	return s.Command
}

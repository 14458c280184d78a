package proto

// Info describes the supervisor behind a control socket (GET /v1/info).
type Info struct {
	PID       int    `json:"pid"`        // process id of the dashboard or `subdash serve`
	Dir       string `json:"dir"`        // working directory of its agents
	Socket    string `json:"socket"`     // the control socket path
	Command   string `json:"command"`    // the agent command
	MaxAgents int    `json:"max_agents"` // maximum running agents
	RunDir    string `json:"run_dir"`    // folder of this run's logs and journal
	// Logs says where every run's logs are and how much space they take
	// (SPEC §10); Restored is how many agents were restored at start.
	Logs     Storage `json:"logs"`
	Restored int     `json:"restored"`
	// Protocol is the version of the control socket's protocol (2; its
	// routes are under /v1); Kind says what the host is ("dashboard",
	// "serve" or "mcp"); Viewers counts the dashboards attached to it
	// (SPEC §9).
	Protocol int    `json:"protocol"`
	Kind     string `json:"kind,omitempty"`
	Viewers  int    `json:"viewers"`
	// Failure says what the host failed to do that belongs to no one
	// agent (supervisor.Supervisor.Failure): its journal could not be
	// written; omitted when nothing failed.
	Failure string `json:"failure,omitempty"`
	// Warnings are the host's warnings, those found since it started
	// included (a state directory removed under it and made again, a
	// failing --notify-command), oldest first; omitted when none.
	Warnings []string `json:"warnings,omitempty"`
	// Features names what this host takes beyond its Protocol
	// (HostFeatures); a client asks before it relies on one.
	Features []string `json:"features,omitempty"`
	// Spend is what the host spent against its budgets (SPEC §11
	// "Budgets", FeatureBudget); omitted by an older host.
	Spend *Spend `json:"spend,omitempty"`
}

// Spend is a host's spending and budgets in US dollars (GET /v1/info,
// `ctl info`).
type Spend struct {
	// FleetSpentUSD is what its agents' CLIs reported spending since the
	// host started: restored records excluded, running submissions so far
	// and forgotten agents included.
	FleetSpentUSD float64 `json:"fleet_spent_usd"`
	// FleetBudgetUSD and MaxBudgetUSD are --fleet-budget-usd and
	// --max-budget-usd; omitted when not set.
	FleetBudgetUSD float64 `json:"fleet_budget_usd,omitempty"`
	MaxBudgetUSD   float64 `json:"max_budget_usd,omitempty"`
}

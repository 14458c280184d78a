package server

import (
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/wire"
)

// SettingsOf returns the settings of c as a host sends them (GET
// /v1/config).
func SettingsOf(c supervisor.Config) wire.Settings {
	s := wire.Settings{
		Command: c.Command, CommandSource: string(c.CommandSource), CommandShown: c.CommandShown, Executable: c.Executable,
		MaxAgents: c.MaxAgents, Dir: c.Dir, StateDir: c.StateDir, Socket: c.Socket,
		Grace: c.Grace, Scrollback: c.Scrollback, LineMemory: c.LineMemory, AllowNested: c.AllowNested, MaxDepth: c.MaxDepth,
		Timeout: c.Timeout, NotifyCommand: c.NotifyCommand, CollabTools: c.CollabTools,
		RunnerName: c.RunnerName, Warnings: c.Warnings, Notes: c.Notes,
		Kube: wire.Kube{Namespace: c.Kube.Namespace, Image: c.Kube.Image, Node: c.Kube.Node,
			Env: c.Kube.Env, Secrets: c.Kube.Secrets, StartTimeout: c.Kube.StartTimeout},
		RestoreWindow: c.RestoreWindow, LogRetention: c.LogRetention, MaxLogSize: c.MaxLogSize, TrackChanges: c.TrackChanges,
		StallAfter: c.StallAfter, MaxBudgetUSD: c.Budget.Agent, FleetBudgetUSD: c.Budget.Fleet,
	}
	if p := c.Preset; p != nil {
		s.Preset = &wire.Preset{Name: p.Name, Args: p.Args, Format: p.Format, Approvals: p.Approvals}
	}
	return s
}

package main

import (
	"io"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/settings"
)

// agentsFlags bound sub-agents (docs/agents.md).
func agentsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "agent-depth", Usage: "how deep sub-agents (the task tool) nest: 0 turns the task tool off, 1 lets the session start sub-agents that cannot start their own (default: config.json's agents.max_depth, else 1)"},
		&cli.IntFlag{Name: "agent-parallel", Usage: "how many sub-agents of a session run at once (default: config.json's agents.max_parallel, else 4)"},
		&cli.IntFlag{Name: "max-agents", Usage: "how many sub-agents one prompt may start (default: config.json's agents.max_per_prompt, else 32)"},
	}
}

// agentsConfig is the sub-agents of every session a command starts:
// the task tool with the profiles of the project's .zot/agents and the
// zot home's agents, bounded by the flags, else config.json.
func agentsConfig(cmd *cli.Command, stderr io.Writer) (engine.AgentsConfig, error) {
	var saved settings.Agents
	a := engine.AgentsConfig{Enabled: true, Project: true}
	if h, err := zotHome(stderr); err == nil {
		a.Dirs = []string{h.Agents()}
		// A config.json that does not parse is told by the rules' loader.
		if c, err := settings.LoadConfig(settings.ConfigFile(h.Dir)); err == nil {
			saved = c.Agents
		}
	}
	depth := engine.DefaultAgentDepth
	if saved.MaxDepth != nil {
		depth = *saved.MaxDepth
	}
	a.MaxParallel, a.MaxPerPrompt = saved.MaxParallel, saved.MaxPerPrompt
	if cmd.IsSet("agent-depth") {
		depth = int(cmd.Int("agent-depth"))
		if depth < 0 || depth > settings.MaxAgentDepth {
			return a, usagef("--agent-depth must be from 0 to %d, got %d", settings.MaxAgentDepth, depth)
		}
	}
	if cmd.IsSet("agent-parallel") {
		if a.MaxParallel = int(cmd.Int("agent-parallel")); a.MaxParallel < 1 {
			return a, usagef("--agent-parallel must be at least 1, got %d", a.MaxParallel)
		}
	}
	if cmd.IsSet("max-agents") {
		if a.MaxPerPrompt = int(cmd.Int("max-agents")); a.MaxPerPrompt < 1 {
			return a, usagef("--max-agents must be at least 1, got %d", a.MaxPerPrompt)
		}
	}
	a.MaxDepth = depth
	a.Enabled = depth > 0
	return a, nil
}

// withoutTask is names without the task tool, which is not a built-in
// tool but is named among them.
func withoutTask(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "task" {
			out = append(out, n)
		}
	}
	return out
}

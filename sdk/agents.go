package sdk

import (
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/subagent"
)

// AgentsConfig turns on sub-agents (Config.Agents, docs/agents.md): the
// task tool, with which the model hands a piece of work to a child
// session that has the session's tools (or a profile's fewer), its
// permission mode, approvals and sandbox, and a transcript of its own,
// and gets back its result record. Its events reach the prompt's channel
// as *wire.ChildEvent. The zero value offers no task tool; a Runtime
// reads no profile folder unless Project or Dirs says so.
type AgentsConfig = engine.AgentsConfig

// AgentProfile is a named agent the model may choose for a sub-agent
// (AgentsConfig.Profiles): its description, tools, model and
// instructions, as a profile file's front matter and body give them.
type AgentProfile = subagent.Profile

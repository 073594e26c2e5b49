package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/skills"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/internal/subagent"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Bounds of sub-agents when AgentsConfig sets none.
const (
	// DefaultAgentDepth lets a session start children that cannot start
	// their own.
	DefaultAgentDepth = 1
	// DefaultAgentParallel is how many children of a session run at once.
	DefaultAgentParallel = 4
	// DefaultAgentsPerPrompt is how many children one prompt may start.
	DefaultAgentsPerPrompt = 32
)

// AgentsConfig configures sub-agents: the task tool, with which the model
// hands a piece of work to a child session (docs/agents.md). The zero
// value offers no task tool.
type AgentsConfig struct {
	// Enabled offers the task tool, unless Tools leaves "task" out or
	// NoTools is set.
	Enabled bool
	// MaxDepth is how deep sub-agents nest: 1 (the default, when 0) lets
	// the session start children, which cannot start their own; 2 lets
	// those start one level more.
	MaxDepth int
	// MaxParallel bounds the children of the session that run at once
	// (the task calls of one step start together); 0 means 4.
	MaxParallel int
	// MaxPerPrompt bounds the children one prompt starts (and each
	// child's prompt, the children it starts); 0 means 32. A task call
	// past it is refused.
	MaxPerPrompt int
	// Profiles are named agents the model may choose, besides those read
	// from Dirs (which win a name they share).
	Profiles []subagent.Profile
	// Project reads the profiles of the working directory's .zot/agents,
	// then its .claude/agents (first: they win a name over the others).
	Project bool
	// Dirs are further folders of profiles (the zot home's agents), read
	// when the session starts, after the project's.
	Dirs []string
}

// agentsState is what a session knows of its sub-agents.
type agentsState struct {
	cfg   AgentsConfig
	depth int            // 0 for a session a door made, 1 for its children, …
	slots chan struct{}  // one per child of this session running now
	tool  *subagent.Tool // nil when the session offers no task tool
	base  SessionConfig  // what the children are made from
	// shadowed and problems are the profiles read as the session started
	// that a profile of the same name hides, and the files that could
	// not be used (/agents shows them).
	shadowed []subagent.Profile
	problems []error
	// joint, in a child, says why the budget of the prompt that started
	// it is spent (agent.Overrides.Joint); nil in a session a door made.
	joint func() string
}

// creditKey keys, in a child's context, the func that counts what the
// child spends toward the session and the prompt that started it.
type creditKey struct{}

// splitTask returns names without "task", and whether the task tool is
// wanted: named, or all tools wanted (names nil) and not none.
func splitTask(names []string, none bool) ([]string, bool) {
	if none {
		return names, false
	}
	if names == nil {
		return nil, true
	}
	i := slices.Index(names, subagent.ToolName)
	if i < 0 {
		return names, false
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == subagent.ToolName }), true
}

// setupAgents offers the task tool when cfg asks for it, reading the
// profiles. It is called as the session starts, once its tool set is
// made.
func (s *Session) setupAgents(cfg SessionConfig, wanted bool) {
	a := &s.agents
	a.cfg, a.base = cfg.Agents, cfg
	if a.cfg.MaxDepth <= 0 {
		a.cfg.MaxDepth = DefaultAgentDepth
	}
	if a.cfg.MaxParallel <= 0 {
		a.cfg.MaxParallel = DefaultAgentParallel
	}
	if a.cfg.MaxPerPrompt <= 0 {
		a.cfg.MaxPerPrompt = DefaultAgentsPerPrompt
	}
	if a.slots == nil {
		a.slots = make(chan struct{}, a.cfg.MaxParallel)
	}
	if !wanted || !cfg.Agents.Enabled || a.depth >= a.cfg.MaxDepth {
		return
	}
	var dirs []subagent.Dir
	if a.cfg.Project {
		for _, d := range subagent.ProjectDirs {
			dirs = append(dirs, subagent.Dir{Path: filepath.Join(s.cwd, filepath.FromSlash(d)), Source: subagent.SourceProject})
		}
	}
	for _, d := range a.cfg.Dirs {
		dirs = append(dirs, subagent.Dir{Path: d, Source: subagent.SourceUser})
	}
	found := subagent.Discover(dirs)
	profiles, problems := found.Profiles, found.Problems
	a.shadowed, a.problems = found.Shadowed, problems
	for _, p := range problems {
		s.logf("zot: agent profile left out: %v\n", p)
	}
	for _, p := range a.cfg.Profiles {
		if _, ok := subagent.Find(profiles, p.Name); !ok {
			profiles = append(profiles, p)
		}
	}
	slices.SortFunc(profiles, func(x, y subagent.Profile) int { return strings.Compare(x.Name, y.Name) })
	a.tool = subagent.NewTool(s.runChild, profiles)
	s.agent.Tools().Set(subagent.ToolName, []tools.Tool{a.tool})
}

// AgentList is what list_agents answers: the profiles the task tool
// offers, those shadowed and the files left out, as the session read
// them when it started.
func (s *Session) AgentList() wire.ListAgentsResult {
	a := &s.agents
	res := wire.ListAgentsResult{Agents: []wire.AgentInfo{}, Shadowed: []wire.AgentInfo{}, Problems: []string{}, Tool: a.tool != nil}
	if a.tool == nil {
		return res
	}
	info := func(p subagent.Profile) wire.AgentInfo {
		src := p.Source
		if src == "" {
			src = subagent.SourceUser
		}
		return wire.AgentInfo{Name: p.Name, Description: p.Description, Tools: p.Tools, Model: p.Model, Source: src, Path: p.Path, ShadowedBy: p.ShadowedBy}
	}
	for _, p := range a.tool.Profiles() {
		res.Agents = append(res.Agents, info(p))
	}
	for _, p := range a.shadowed {
		res.Shadowed = append(res.Shadowed, info(p))
	}
	for _, e := range a.problems {
		res.Problems = append(res.Problems, e.Error())
	}
	return res
}

// runAgents is /agents: the agent profiles the task tool offers, with
// where each was found, those shadowed, and the files left out.
func runAgents(_ context.Context, s *Session, args string) (CommandRun, error) {
	a := &s.agents
	if a.tool == nil {
		return display("The task tool is off in this session (--tools, --no-tools, --agent-depth 0 or a sub-agent at the deepest level): the model starts no sub-agents."), nil
	}
	profiles := a.tool.Profiles()
	if args != "" {
		p, ok := subagent.Find(profiles, args)
		if !ok {
			return refusal(fmt.Sprintf("no agent profile %q; /agents lists them.", args)), nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s (%s, %s)", p.Name, p.Description, p.Source, p.Path)
		if p.Tools != nil {
			fmt.Fprintf(&b, "\ntools: %s", strings.Join(p.Tools, ", "))
		}
		if p.Model != "" {
			fmt.Fprintf(&b, "\nmodel: %s", p.Model)
		}
		if p.Instructions != "" {
			b.WriteString("\n\n" + p.Instructions)
		}
		return display(b.String()), nil
	}
	var b strings.Builder
	b.WriteString("Agents the model may start with the task tool:\n- general: a general-purpose agent with all of the session's tools")
	for _, p := range profiles {
		src := p.Source
		if p.Path != "" {
			src += ", " + p.Path
		}
		fmt.Fprintf(&b, "\n- %s: %s (%s)", p.Name, p.Description, src)
	}
	for _, p := range a.shadowed {
		fmt.Fprintf(&b, "\n- shadowed: %s (%s, %s), by %s", p.Name, p.Source, p.Path, p.ShadowedBy)
	}
	for _, e := range a.problems {
		fmt.Fprintf(&b, "\n- not read: %v", e)
	}
	return display(b.String()), nil
}

// childRoute is how a child's events and approvals reach the session a
// door made: carried in the context of every child's work.
type childRoute struct {
	emit   func(wire.Event) // the top work's emitter
	callID string           // the top session's task call
	path   []string         // the task calls below it, outermost first
	agent  string
}

// childRouteKey keys the childRoute in a child's context.
type childRouteKey struct{}

// routeOf returns the route of a child started by the task call callID
// under ctx: below the route ctx already has (a child of a child), else
// to the work ctx runs in.
func routeOf(ctx context.Context, callID, agent string) *childRoute {
	if up, ok := ctx.Value(childRouteKey{}).(*childRoute); ok {
		return &childRoute{emit: up.emit, callID: up.callID, path: append(slices.Clone(up.path), callID), agent: agent}
	}
	emit, _ := ctx.Value(emitterKey{}).(func(wire.Event))
	return &childRoute{emit: emit, callID: callID, agent: agent}
}

// emitApproval delivers a permission request: into the work a door
// started, with the task call it runs under, when ctx is a child's; into
// ctx's own work otherwise.
func emitApproval(ctx context.Context, ev *wire.PermissionRequestEvent) {
	if r, ok := ctx.Value(childRouteKey{}).(*childRoute); ok && r.emit != nil {
		ev.ParentID = r.callID
		r.emit(ev)
		return
	}
	emitInto(ctx, ev)
}

// parentCallOf returns the task call a child's ctx runs under, in the
// session a door made; "" outside a child.
func parentCallOf(ctx context.Context) string {
	if r, ok := ctx.Value(childRouteKey{}).(*childRoute); ok {
		return r.callID
	}
	return ""
}

// runChild is the task tool's Runner: it makes the child session, runs
// the request's prompt in it under ctx (the task call's: an abort of the
// parent aborts the child at once), forwards its events and returns its
// result record.
func (s *Session) runChild(ctx context.Context, req subagent.Request, progress func(string)) (subagent.Outcome, error) {
	a := &s.agents
	if t := tallyOf(ctx); !t.addChild(s, a.cfg.MaxPerPrompt) {
		return subagent.Outcome{}, &subagent.RefusedError{Reason: fmt.Sprintf("refused: this prompt has started as many sub-agents as it may (%d, --max-agents)", a.cfg.MaxPerPrompt)}
	}
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return subagent.Outcome{Result: &wire.PromptResult{Stop: wire.StopAborted}, Error: "aborted before it started"}, nil
	}
	defer func() { <-a.slots }()
	name := ""
	if req.Agent != nil {
		name = req.Agent.Name
	}
	child, err := s.newChild(req)
	if err != nil {
		return subagent.Outcome{}, &subagent.RefusedError{Reason: "the sub-agent could not start: " + err.Error()}
	}
	defer child.Close()
	// Its bash is the parent's and says what the sandbox is: its tool
	// list follows a change as the parent's does.
	defer s.sbox.guard.OnChange(child.agent.Tools().Refresh)()
	child.agent.Tools().Refresh()
	// What the child spends counts toward this session's running usage,
	// the prompt's record and its cost budget, and so on up.
	up, _ := ctx.Value(creditKey{}).(func(wire.Usage))
	t := tallyOf(ctx)
	credit := func(u wire.Usage) {
		s.agent.AddUsage(u)
		s.emitMu.Lock()
		t.addChildUsage(u)
		s.emitMu.Unlock()
		if up != nil {
			up(u)
		}
	}
	child.agents.joint = func() string { return s.agent.OverBudget(ctx) }
	route := routeOf(ctx, req.CallID, name)
	var (
		out    subagent.Outcome
		ended  = make(chan struct{})
		steps  int
		prefix = ""
	)
	if req.Description != "" {
		prefix = req.Description + ": "
	}
	sink := func(_ context.Context, ev wire.Event) {
		if e, ok := ev.(*wire.DoneEvent); ok {
			out.Result = e.Result
			close(ended)
			return // a child's done is never forwarded: the task's tool_result is its end
		}
		if route.emit != nil {
			ce := &wire.ChildEvent{ParentID: route.callID, Agent: route.agent, Event: json.RawMessage(ev.AppendJSON(nil))}
			if len(route.path) > 0 {
				ce.Path = route.path
			}
			route.emit(ce)
		}
		// The clients that see only the task call see its steps.
		switch e := ev.(type) {
		case *wire.ErrorEvent:
			out.Error = e.Message
			progress(prefix + "error: " + e.Message + "\n")
		case *wire.UsageEvent:
			credit(wire.Usage{Input: e.Input, Output: e.Output, CacheRead: e.CacheRead, CacheWrite: e.CacheWrite, CostUSD: e.CostUSD, CostUnknown: e.CostUnknown})
		case *wire.TurnStartEvent:
			steps++
		case *wire.ToolCallEvent:
			progress(fmt.Sprintf("%sstep %d: %s\n", prefix, steps, callSummary(e.Name, e.Args)))
		}
	}
	work := Work{
		Prompt: &PromptInput{Text: req.Prompt},
		Ctx:    context.WithValue(context.WithValue(ctx, childRouteKey{}, route), creditKey{}, credit),
		Sink:   sink,
	}
	if err := child.Submit(work, RefuseBusy, nil); err != nil {
		return subagent.Outcome{}, &subagent.RefusedError{Reason: "the sub-agent could not start: " + err.Error()}
	}
	<-ended
	return out, nil
}

// newChild makes the session of a child: the parent's provider and
// working directory, the model req asks for, the parent's tools (only
// those the profile names, and the task tool only while the depth
// allows), a transcript of its own in memory, the parent's executor, and
// every tool call put through the parent's interceptors, permission mode,
// rules, approvals and sandbox.
func (s *Session) newChild(req subagent.Request) (*Session, error) {
	a := &s.agents
	cfg := a.base
	cfg.SessionFile, cfg.SessionStore, cfg.SessionID = "", "", ""
	cfg.Extensions, cfg.MCPServers, cfg.MCP = ExtensionConfig{}, nil, MCPOptions{}
	// The profiles are the parent's, read once.
	cfg.Agents.Project, cfg.Agents.Dirs, cfg.Agents.Profiles = false, nil, a.tool.Profiles()
	cfg.Model = s.Model()
	if req.Model != "" {
		cfg.Model = req.Model
	}
	var extra []string
	extra = append(extra, "You are a sub-agent: another agent gave you the task in the user's message. Work on it alone with your tools, then answer with what it asked for; your final answer is all it receives.")
	if req.Agent != nil && req.Agent.Instructions != "" {
		extra = append(extra, req.Agent.Instructions)
	}
	if cfg.AppendSystemPrompt != "" {
		extra = append([]string{cfg.AppendSystemPrompt}, extra...)
	}
	cfg.AppendSystemPrompt = strings.Join(extra, "\n\n")

	var allowed []string
	if req.Agent != nil {
		allowed = req.Agent.Tools
	}
	var list []tools.Tool
	for _, t := range s.agent.Tools().View().Tools() {
		if t.Name() == subagent.ToolName {
			continue // the child gets its own, bound to it, while the depth allows
		}
		if allowed != nil && !slices.Contains(allowed, t.Name()) {
			continue
		}
		list = append(list, t)
	}
	// The child's prompts run where the parent's do: with an executor (a
	// fleet), its turn is one of the executor's too, started under the
	// task call.
	c := &Session{host: s.host, catalog: s.catalog, provider: s.provider, cwd: s.cwd, log: s.log,
		spills: tools.NewSpills(""), sbox: s.sbox, approval: s.approval, exec: s.exec, parentCall: req.CallID}
	// The child's own children have slots of their own: sharing the
	// parent's would leave a child holding the last slot waiting forever
	// for one for its own child.
	c.agents.depth = a.depth + 1
	p, err := s.host.buildProvider(cfg)
	if err != nil {
		return nil, err
	}
	toolset, err := agent.NewToolSet(list, c.toolConflict)
	if err != nil {
		return nil, err
	}
	// The parent's interceptors, its approval last among them, decide
	// every call of the child.
	chain := new(agent.Chain)
	parent := s.agent.Interceptors()
	chain.Add(agent.Interceptor{
		Name:       "parent",
		Order:      agent.OrderApproval,
		Timeout:    -1,
		FailClosed: true,
		BeforeTool: parent.BeforeTool,
	})
	// The parent's skills and project instructions; the skills are listed
	// when the child has the skill tool.
	parts := s.prompt
	parts.skillTool = slices.ContainsFunc(list, func(t tools.Tool) bool { return t.Name() == skills.ToolName })
	c.prompt = parts
	model := s.catalog.Resolve(s.provider, cfg.Model)
	if err := model.TakesEffort(cfg.Reasoning); err != nil {
		cfg.Reasoning = "" // a model the parent's level does not fit takes its default
	}
	modelMW, toolMW := cfg.ModelMiddleware, append(slices.Clip(cfg.ToolMiddleware), s.recordChanges) // the parent's turn records what the child changes
	if s.host.wrap != nil {
		// The host's middleware of the parent session wraps the child's
		// calls too: a tracer's spans of them sit under the task call's,
		// a tap records them as the parent session's.
		m, t := s.host.wrap(s)
		modelMW, toolMW = append(slices.Clip(m), modelMW...), append(slices.Clip(t), toolMW...)
	}
	ag, err := agent.New(agent.Config{
		Provider:         p,
		Model:            model,
		ToolSet:          toolset,
		Interceptors:     chain,
		ModelMiddleware:  modelMW,
		ToolMiddleware:   toolMW,
		System:           systemPrompt(cfg, c.cwd, toolset, &parts),
		MaxSteps:         cfg.MaxSteps,
		Reasoning:        cfg.Reasoning,
		Inbox:            &c.inbox,
		AutoCompactOff:   cfg.AutoCompactOff,
		CompactThreshold: cfg.CompactThreshold,
	})
	if err != nil {
		return nil, err
	}
	c.agent = ag
	_, wanted := splitTask(cfg.Tools, cfg.NoTools)
	if req.Agent != nil && req.Agent.Tools != nil {
		wanted = wanted && slices.Contains(req.Agent.Tools, subagent.ToolName)
	}
	c.setupAgents(cfg, wanted)
	s.keepChild(c, req.CallID)
	return c, nil
}

// keepChild gives the child c of a session kept in a session store a
// file of its own in that store, linked to the session and to callID,
// the task call that started it, as a fork is linked to its parent: its
// transcript is kept (zot sessions list --tree, zot sessions show). A
// session in memory only keeps none; a file that cannot be made is
// reported and the child runs in memory.
func (s *Session) keepChild(c *Session, callID string) {
	s.mu.Lock()
	id, f := s.storedID, s.store
	s.mu.Unlock()
	if id == "" || f == nil || callID == "" {
		return
	}
	parentPath := f.Path()
	opt := sessionfile.Options{CWD: s.cwd, Parent: id, ParentCall: callID}
	if info, err := sessionfile.ReadInfo(parentPath); err == nil {
		opt.Owner = info.Owner // the child belongs to whom the session belongs
	}
	childID := store.NewID()
	cf, _, err := sessionfile.Open(filepath.Join(filepath.Dir(parentPath), childID+".jsonl"), opt)
	if err != nil {
		s.logf("zot: the sub-agent's transcript is not kept: %v\n", err)
		return
	}
	c.store, c.storedID = cf, childID
}

// callSummary is one line saying what a child's tool call does, for the
// task call's progress.
func callSummary(name string, args json.RawMessage) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	for _, k := range []string{"command", "path", "pattern", "description"} {
		if v, ok := a[k].(string); ok && v != "" {
			if i := strings.IndexByte(v, '\n'); i >= 0 {
				v = v[:i] + " …"
			}
			if len(v) > 80 {
				v = v[:80] + "…"
			}
			return name + " " + v
		}
	}
	return name
}

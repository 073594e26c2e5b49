// Package engine is zot's middle, between the doors (the Go SDK, `zot rpc`,
// print mode, the daemon) and the agent loop.
//
// A [Host] holds what sessions share: the model catalog and the settings
// of each provider (credentials, endpoints, the scripted provider's
// script). A [Session] is one conversation: it alone owns its agent, and
// it holds the rules every door keeps the same way:
//   - one piece of work (a prompt or a compaction) runs at a time; more
//     either queue in the order they were sent or are refused as busy;
//   - abort cancels the running work, abort-all also drops the queue, and
//     every piece of work ends, in the order it was sent, with exactly one
//     done event (an aborted or dropped one after turn_end{aborted});
//   - every event is stamped with the session's next seq and the prompt_id
//     of the work it belongs to, and seen by the session's observers before
//     it reaches the work's sink;
//   - the transcript is kept in the session file, if any.
//
// A door decodes its protocol, calls the Session, and encodes what comes
// back. An idle Session holds no goroutine and no provider connection; its
// worker goroutine lives only while work is queued or running.
package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/checkpoint"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// ProtocolVersion is the major version of the wire protocol.
const ProtocolVersion = 1

// ProviderSettings say how to reach one provider.
type ProviderSettings struct {
	// APIKey is the credential; empty sends none.
	APIKey string
	// BaseURL overrides the vendor's endpoint.
	BaseURL string
	// Script is the scripted provider's script file; empty plays the
	// built-in one.
	Script string
}

// HostConfig configures a Host.
type HostConfig struct {
	// Catalog is the model catalog; nil means the built-in one.
	Catalog *models.Catalog
	// Providers holds the settings of each provider by name. A provider
	// without an entry is reached with no key at its vendor's endpoint.
	Providers map[string]ProviderSettings
	// HTTPClient sends the requests of every session's provider (a
	// session's own SessionConfig.HTTPClient wins): a proxy, a transport
	// that records or counts, other TLS settings. nil means one client
	// shared by the process, with bounded dial, TLS and header waits and
	// no overall timeout (a stream is long); a client given here should
	// have no overall Timeout either.
	HTTPClient *http.Client
	// SessionMiddleware, when set, is called once for each session as
	// NewSession makes it; the model and tool middleware it returns wrap
	// that session's calls outside the session's own
	// (SessionConfig.ModelMiddleware, ToolMiddleware): a process-wide
	// tracer or traffic tap that needs to know whose call it sees (s's
	// StoredID, read at call time; s is not ready for other use yet).
	SessionMiddleware func(s *Session) (model []agent.ModelMiddleware, tool []agent.ToolMiddleware)
	// WorkHook, when set, is called as each piece of work of a session
	// starts to run, on the session's worker goroutine: the context it
	// returns is the work's from then on (a tracer's span of the prompt,
	// the parent of its model and tool calls' spans), and end, when not
	// nil, is called with the work's error once it has run, before its
	// done is delivered. It must not block.
	WorkHook func(s *Session, ctx context.Context, w WorkInfo) (_ context.Context, end func(error))
}

// Host holds what the sessions of one process share. It is safe for
// concurrent use.
type Host struct {
	catalog   *models.Catalog
	providers map[string]ProviderSettings
	client    *http.Client
	wrap      func(*Session) ([]agent.ModelMiddleware, []agent.ToolMiddleware)
	workHook  func(*Session, context.Context, WorkInfo) (context.Context, func(error))

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

// NewHost returns a Host for cfg.
func NewHost(cfg HostConfig) *Host {
	h := &Host{
		catalog:   cfg.Catalog,
		providers: maps.Clone(cfg.Providers),
		client:    cfg.HTTPClient,
		wrap:      cfg.SessionMiddleware,
		workHook:  cfg.WorkHook,
		sessions:  make(map[*Session]struct{}),
	}
	if h.catalog == nil {
		h.catalog = models.Builtin()
	}
	return h
}

// Catalog returns the host's model catalog.
func (h *Host) Catalog() *models.Catalog { return h.catalog }

// Models returns the catalog's models of provider, sorted by id, in their
// wire form.
func (h *Host) Models(provider string) []wire.ModelInfo { return catalogModels(h.catalog, provider) }

// catalogModels returns catalog's models of provider, sorted by id, in
// their wire form.
func catalogModels(catalog *models.Catalog, provider string) []wire.ModelInfo {
	list := catalog.List(provider)
	out := make([]wire.ModelInfo, 0, len(list))
	for _, m := range list {
		out = append(out, modelInfo(m))
	}
	return out
}

// modelInfo returns m in its wire form.
func modelInfo(m models.Model) wire.ModelInfo {
	m = m.At(time.Now())
	info := wire.ModelInfo{
		ID:            m.ID,
		Provider:      m.Provider,
		ContextWindow: int64(m.ContextWindow),
		MaxOutput:     int64(m.MaxOutput),
		Reasoning:     m.Reasoning,
	}
	for _, l := range m.EffortLevels() {
		info.ReasoningLevels = append(info.ReasoningLevels, wire.ReasoningLevel(l))
	}
	if m.Input != 0 || m.Output != 0 || m.CacheRead != 0 || m.CacheWrite != 0 {
		info.Price = &wire.Price{Input: m.Input, Output: m.Output, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite}
	}
	return info
}

// buildProvider makes a provider client for one session. Clients are not
// shared between sessions: each keeps per-conversation state (the
// encodings of its last request; the scripted provider's place in its
// script). Connections are shared all the same, through one HTTP client:
// the session's, else the host's, else the process's.
// The session's own settings (SessionConfig.APIKey, BaseURL, Script)
// win over the host's, each where it is set.
func (h *Host) buildProvider(cfg SessionConfig) (llm.Provider, error) {
	name, client := cfg.Provider, cfg.HTTPClient
	set := h.providers[name]
	for _, o := range []struct{ own, host *string }{{&cfg.APIKey, &set.APIKey}, {&cfg.BaseURL, &set.BaseURL}, {&cfg.Script, &set.Script}} {
		if *o.own != "" {
			*o.host = *o.own
		}
	}
	if client == nil {
		client = h.client
	}
	return registry.Build(registry.Spec{Name: name, APIKey: set.APIKey, BaseURL: set.BaseURL, ScriptPath: set.Script,
		HTTP: httpcall.Options{HTTPClient: client}})
}

// NewSession starts a session: it resolves the working directory, the
// model and the tools, and opens (resuming) the session file when there is
// one. It fails on an unknown provider or tool, a working directory that
// does not exist, or a session file it cannot use.
func (h *Host) NewSession(cfg SessionConfig) (*Session, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if cfg.Provider == "" {
		return nil, errors.New("no provider given")
	}
	if !registry.Known(cfg.Provider) {
		return nil, &registry.UnknownError{Name: cfg.Provider}
	}
	cwd, err := workDir(cfg.CWD)
	if err != nil {
		return nil, err
	}
	storedID, err := storedSession(&cfg) // stored.go
	if err != nil {
		return nil, err
	}
	catalog := h.catalog
	if cfg.ModelsFile != "" {
		if catalog, err = models.Load(cfg.ModelsFile); err != nil {
			return nil, fmt.Errorf("models file: %w", err)
		}
	}
	if cfg.Permission != "" {
		if cfg.Mode, cfg.LockMode, err = ModeOfPermission(cfg.Permission); err != nil {
			return nil, fmt.Errorf("the permission policy (Permission): %w", err)
		}
	}
	modelID := cfg.Model
	if modelID == "" {
		var ok bool
		if modelID, ok = catalog.Default(cfg.Provider); !ok {
			return nil, fmt.Errorf("provider %s has no default model; give a model", cfg.Provider)
		}
	}
	p, err := h.buildProvider(cfg)
	if err != nil {
		return nil, err
	}
	sbox, err := newSandboxState(cfg.Sandbox, cwd) // sandbox.go
	if err != nil {
		return nil, err
	}
	spills := tools.NewSpills("")                        // makes nothing before bash first spills
	parts := loadPromptParts(cfg, cwd)                   // skills.go
	names, wantTask := splitTask(cfg.Tools, cfg.NoTools) // subagents.go
	builtin, err := tools.Select(parts.offer(tools.Builtins(tools.Config{CWD: cwd, BashTimeout: cfg.BashTimeout, Spills: spills, Sandbox: sbox.guard})), names, cfg.NoTools)
	if err != nil {
		return nil, err
	}
	builtin = parts.selected(builtin)
	s := &Session{host: h, catalog: catalog, provider: cfg.Provider, cwd: cwd, log: cfg.Log, spills: spills, storedID: storedID, sbox: sbox, maxCost: cfg.MaxCostUSD, prompt: parts, exec: cfg.Executor}
	s.promptWarnings()
	s.undo.store = checkpoint.New(checkpointDir(cfg), checkpoint.Limits{}) // undo.go
	toolset, err := agent.NewToolSet(builtin, s.toolConflict)
	if err != nil {
		return nil, err
	}
	sbox.guard.OnChange(toolset.Refresh) // bash's description says what the sandbox is
	chain := new(agent.Chain)
	mode, err := firstMode(cfg)
	if err != nil {
		return nil, err
	}
	// The approval step is always in the chain: the mode may change at
	// any time (modes.go), and it decides before anybody is asked.
	s.approval = newApproval(cfg.Approve, cfg.AnswerApprovals, cfg.ApprovalTimeout, cfg.ApprovalTools, mode, cfg.LockMode)
	if s.approval.rules, err = rulesOf(cfg.Permissions, cwd, s.settingsWarning); err != nil {
		return nil, err
	}
	s.approval.warn = s.settingsWarning
	s.approval.sandbox, s.approval.cwd = sbox.guard, cwd
	s.applySandbox()
	if cfg.ApproveOtherTools {
		builtins := make(map[string]bool, len(builtin))
		for _, t := range builtin {
			builtins[t.Name()] = true
		}
		s.approval.other = func(name string) bool {
			if builtins[name] {
				return false
			}
			t, ok := toolset.View().Lookup(name)
			return ok && !tools.IsReadOnly(t)
		}
	}
	chain.Add(s.approval.interceptor())
	model := catalog.Resolve(cfg.Provider, modelID)
	if err := model.TakesEffort(cfg.Reasoning); err != nil {
		// Said as the user asked it, not as the agent's own error.
		return nil, &ReasoningError{Err: err}
	}
	modelMW, toolMW := cfg.ModelMiddleware, append(slices.Clip(cfg.ToolMiddleware), s.recordChanges) // undo.go
	if h.wrap != nil {
		m, t := h.wrap(s)
		modelMW, toolMW = append(slices.Clip(m), modelMW...), append(slices.Clip(t), toolMW...)
	}
	a, err := agent.New(agent.Config{
		Provider:         p,
		Model:            model,
		ToolSet:          toolset,
		Interceptors:     chain,
		ModelMiddleware:  modelMW,
		ToolMiddleware:   toolMW,
		System:           systemPrompt(cfg, cwd, toolset, &parts),
		MaxSteps:         cfg.MaxSteps,
		Reasoning:        cfg.Reasoning,
		Inbox:            &s.inbox,
		AutoCompactOff:   cfg.AutoCompactOff,
		CompactThreshold: cfg.CompactThreshold,
	})
	if err != nil {
		return nil, err
	}
	s.agent = a
	s.setupAgents(cfg, wantTask) // subagents.go
	if cfg.SessionFile != "" {
		f, msgs, err := sessionfile.Open(cfg.SessionFile, sessionfile.Options{CWD: cwd, Owner: cfg.Owner})
		if err != nil {
			return nil, err
		}
		if err := a.SetTranscript(msgs); err != nil {
			var te *agent.TranscriptError
			if errors.As(err, &te) {
				// A file whose messages do not hold together is damaged
				// data, named by its line, not a fault of zot's.
				err = &sessionfile.CorruptError{Path: cfg.SessionFile, Line: f.Line(te.Index), Err: te.Err}
			} else {
				err = fmt.Errorf("resuming %s: %w", cfg.SessionFile, err)
			}
			f.Close()
			return nil, err
		}
		s.store = f
		if r, ok := cfg.Executor.(Resumer); ok && storedID != "" {
			// A turn the last process sent out and never saw end.
			// Its calls pass the session's interceptors here, its mode and
			// rules; no client holds the session yet to answer a person's
			// approval, which is refused as after its client left.
			var err error
			s.approval.awayWhile("the session's turn is finished while it opens, before a client holds it", func() {
				err = r.Resume(context.Background(), ExecTurn{Session: storedID, CWD: cwd, Agent: a, Sandbox: s.sbox.guard})
			})
			if err != nil {
				if s.log != nil {
					fmt.Fprintf(s.log, "zot: session %s: finishing its last turn: %v\n", storedID, err)
				}
			} else if err := f.Save(a.Transcript()); err != nil {
				f.Close()
				return nil, fmt.Errorf("zot: saving the session: %w", err)
			}
		}
	}
	// The open panels follow their redraws and closes (panels.go).
	s.Observe(s.panels.observe)
	if err := s.startPlugins(cfg); err != nil { // extensions.go
		if s.store != nil {
			s.store.Close()
		}
		return nil, err
	}
	if r := s.approval.rules; r != nil {
		r.Load() // a settings file that does not parse is told now
	}
	s.sandboxWarning() // a sandbox that cannot be enforced is told now
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		_ = s.closePlugins()
		if s.store != nil {
			s.store.Close()
		}
		return nil, ErrClosed
	}
	h.sessions[s] = struct{}{}
	return s, nil
}

// Sessions returns the host's open sessions, in no particular order.
func (h *Host) Sessions() []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.sessions))
}

// forget drops a closed session.
func (h *Host) forget(s *Session) {
	h.mu.Lock()
	delete(h.sessions, s)
	h.mu.Unlock()
}

// Close closes every session (aborting their work, which still ends with
// its done) and refuses new ones. It returns the first error a session's
// Close reported.
func (h *Host) Close() error {
	h.mu.Lock()
	h.closed = true
	list := slices.Collect(maps.Keys(h.sessions))
	h.mu.Unlock()
	// Sessions close side by side: each may wait up to StopTimeout for
	// its extensions and MCP servers, which one after another would add
	// up.
	return CloseAll(list, (*Session).Close)
}

// closeParallel bounds how many sessions CloseAll closes at once.
const closeParallel = 16

// CloseAll calls close on every item, up to 16 at once, and returns the
// first error in the order of items. It returns when every call has.
func CloseAll[T any](items []T, close func(T) error) error {
	errs := make([]error, len(items))
	slots := make(chan struct{}, closeParallel)
	var wg sync.WaitGroup
	for i, it := range items {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			errs[i] = close(it)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ErrWorkDir is matched (errors.Is) by the error of NewSession for a
// working directory that cannot be used: the caller's to change
// (invalid_params), not a fault of zot's.
var ErrWorkDir = wire.Sentinel(wire.CodeInvalidParams, "working directory")

// workDir makes dir absolute (the process's directory when empty) and
// checks that it is a directory.
func workDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrWorkDir, err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrWorkDir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w %s is not a directory", ErrWorkDir, abs)
	}
	return abs, nil
}

// systemPrompt returns the session's system prompt function. It lists the
// tools the model is offered, so it is built again whenever the tool set
// changes; otherwise it costs a pointer compare per model call.
func systemPrompt(cfg SessionConfig, cwd string, set *agent.ToolSet, parts *promptParts) func() string {
	var (
		mu    sync.Mutex
		seen  *agent.ToolView
		build func() string
	)
	return func() string {
		view := set.View()
		mu.Lock()
		if view != seen {
			seen = view
			build = sysprompt.Builder(sysprompt.Options{
				Override:     cfg.SystemPrompt,
				Append:       cfg.AppendSystemPrompt,
				CWD:          cwd,
				Tools:        view.Tools(),
				Instructions: parts.instructions.Text,
				Skills:       parts.manifest(),
			})
		}
		b := build
		mu.Unlock()
		return b()
	}
}

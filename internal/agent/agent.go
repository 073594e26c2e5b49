// Package agent is zot's agent core: the loop that every door (the Go SDK,
// `zot rpc`, print mode) drives. An [Agent] owns a transcript and runs
// prompts on it: it asks the model, streams what arrives as wire events,
// runs the tools the model calls, and repeats until the model stops. It
// also compacts the transcript, on request and automatically near the
// model's context limit.
//
// Events are pointers to the generated types of package wire, with Seq and
// PromptID left zero for the caller to stamp. The caller also writes the
// error and done events that close a prompt (see [Agent.Prompt]).
//
// # Concurrency
//
// Prompt, Compact, Clear, SetModel and SetTranscript change the agent and
// must not overlap: the caller serialises them. In zot that caller is the
// engine's Session, which holds the one busy state (its run queue). The
// read-only methods (Messages, Transcript, MessageCount, Model, Usage) may
// be called at any time, from any goroutine, also while a prompt runs, and
// so may the tool set's and the interceptor chain's methods.
//
// # Seams
//
// The tool set ([ToolSet]) is read at every step, so tools added or
// removed between steps (by extensions, MCP servers) reach the next model
// call. The interceptor chain ([Chain]) can block a step, block or rewrite
// a tool call, and block or re-word an assistant message before clients
// see it. Events go to the emit function each call is given; whoever
// gives it may fan them out further.
//
// # The transcript stays valid
//
// Whatever happens, the transcript can be sent to any provider again:
//   - a prompt that ends (by error, abort or a blocking hook) before any
//     assistant message of it was kept leaves no trace: its user message is
//     removed again (it was still reported as user_message);
//   - a model call that fails or is aborted partway keeps only the text it
//     streamed, as a plain assistant message; its tool calls and thinking
//     are dropped;
//   - every kept tool call has a result: real, or a synthetic error for
//     calls skipped by an abort; results never appear without their call.
package agent

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"zot.dev/zot/internal/compact"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Defaults used when a Config field is zero.
const (
	DefaultMaxSteps         = 50
	DefaultCompactThreshold = 0.85
)

// Config configures an Agent.
type Config struct {
	// Provider makes the model calls. Required.
	Provider llm.Provider
	// Model is the model to call; its ID is required. Its context window
	// drives auto-compaction and its prices the cost.
	Model models.Model
	// Tools are the built-in tools the model may call; names must be
	// unique. Ignored when ToolSet is set.
	Tools []tools.Tool
	// ToolSet, when set, is the tool set the agent reads at every step;
	// nil means a new set holding Tools.
	ToolSet *ToolSet
	// System returns the system prompt. It is called before every model
	// call, so a prompt that shows the date (or a tool set that changed)
	// is never stale. nil means zot's default prompt for the initial tools
	// and the process's working directory.
	System func() string
	// MaxSteps bounds the model calls of one prompt; 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// MaxTokens caps the output of one model call; 0 lets the provider
	// choose from the model's limit.
	MaxTokens int
	// Reasoning is the reasoning level (llm.ReasoningLevels), "" for the
	// model's default. The model must take it (models.Model.TakesEffort).
	Reasoning string
	// Interceptors, when set, is the chain that steers the loop; nil means
	// an empty chain (see Agent.Interceptors).
	Interceptors *Chain
	// ModelMiddleware wraps every model call, the first outermost (see
	// ModelMiddleware): a prompt's steps and compaction's summaries.
	ModelMiddleware []ModelMiddleware
	// ToolMiddleware wraps every tool call that runs, the first outermost
	// (see ToolMiddleware).
	ToolMiddleware []ToolMiddleware
	// Inbox, when set, is where steers and contexts from outside wait for
	// the next step boundary of a prompt (see Inbox).
	Inbox *Inbox
	// AutoCompactOff turns automatic compaction off.
	AutoCompactOff bool
	// CompactThreshold is the share of the model's context window above
	// which the transcript is compacted when a prompt ends; 0 means
	// DefaultCompactThreshold. It must lie in (0, 1].
	CompactThreshold float64
	// KeepTail is how many recent messages compaction keeps as they are;
	// 0 means compact.DefaultKeepTail.
	KeepTail int
	// Now gives the time of transcript messages; nil means time.Now.
	// Times are stored in UTC.
	Now func() time.Time
}

// Agent runs prompts on a transcript. See the package documentation for
// which methods may overlap.
type Agent struct {
	provider llm.Provider
	toolset  *ToolSet
	chain    *Chain
	// modelCall makes model calls through the model middleware; nil
	// without any. toolCall runs tool calls through the tool middleware.
	modelCall ModelFunc
	toolCall  ToolFunc
	system    func() string
	inbox     *Inbox
	maxSteps  int
	maxTokens int
	reasoning string
	autoOff   bool
	threshold float64
	keepTail  int
	now       func() time.Time

	meter models.Meter

	mu      sync.Mutex
	model   models.Model
	msgs    []llm.Message
	context int // context size reported by the last model call, in tokens
	// gen numbers the versions of msgs: it changes whenever msgs changes
	// other than by a message appended (TranscriptView).
	gen uint64
	// bound keeps the system prompt still for a model with bound thinking
	// (see bound.go).
	bound boundState
}

// New returns an Agent for cfg with an empty transcript.
func New(cfg Config) (*Agent, error) {
	if cfg.Provider == nil {
		return nil, errors.New("agent: no provider")
	}
	if cfg.Model.ID == "" {
		return nil, errors.New("agent: no model id")
	}
	if cfg.MaxSteps < 0 {
		return nil, fmt.Errorf("agent: max steps must not be negative, got %d", cfg.MaxSteps)
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("agent: max tokens must not be negative, got %d", cfg.MaxTokens)
	}
	if err := cfg.Model.TakesEffort(cfg.Reasoning); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if t := cfg.CompactThreshold; t < 0 || t > 1 {
		return nil, fmt.Errorf("agent: compaction threshold %v is not in (0, 1]", t)
	}
	a := &Agent{
		provider:  cfg.Provider,
		toolset:   cfg.ToolSet,
		chain:     cfg.Interceptors,
		system:    cfg.System,
		inbox:     cfg.Inbox,
		maxSteps:  cfg.MaxSteps,
		maxTokens: cfg.MaxTokens,
		reasoning: cfg.Reasoning,
		autoOff:   cfg.AutoCompactOff,
		threshold: cfg.CompactThreshold,
		keepTail:  cfg.KeepTail,
		now:       cfg.Now,
		model:     cfg.Model,
	}
	if a.toolset == nil {
		ts, err := NewToolSet(cfg.Tools, nil)
		if err != nil {
			return nil, err
		}
		a.toolset = ts
	}
	if a.chain == nil {
		a.chain = new(Chain)
	}
	a.useMiddleware(cfg.ModelMiddleware, cfg.ToolMiddleware)
	if a.system == nil {
		a.system = sysprompt.Builder(sysprompt.Options{Tools: a.toolset.View().Tools(), Now: cfg.Now})
	}
	if a.maxSteps == 0 {
		a.maxSteps = DefaultMaxSteps
	}
	if a.threshold == 0 {
		a.threshold = DefaultCompactThreshold
	}
	if a.keepTail == 0 {
		a.keepTail = compact.DefaultKeepTail
	}
	if a.now == nil {
		a.now = time.Now
	}
	return a, nil
}

// Tools returns the agent's tool set.
func (a *Agent) Tools() *ToolSet { return a.toolset }

// Interceptors returns the agent's interceptor chain.
func (a *Agent) Interceptors() *Chain { return a.chain }

// timeNow returns the current time in UTC, to the millisecond (the
// precision the wire reports).
func (a *Agent) timeNow() time.Time {
	return a.now().UTC().Truncate(time.Millisecond)
}

// Messages returns the transcript in its wire form, oldest first: thinking
// is left out, images are reported by size, invalid tool arguments as the
// text the model wrote.
func (a *Agent) Messages() []wire.Message {
	a.mu.Lock()
	msgs := slices.Clone(a.msgs)
	a.mu.Unlock()
	out := make([]wire.Message, len(msgs))
	for i := range msgs {
		out[i] = wireMessage(&msgs[i])
	}
	return out
}

// Transcript returns a copy of the transcript. The messages' blocks are
// shared with the agent and must not be modified.
func (a *Agent) Transcript() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.msgs)
}

// MessageCount returns the number of messages in the transcript.
func (a *Agent) MessageCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.msgs)
}

// Model returns the current model.
func (a *Agent) Model() models.Model {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model
}

// Usage returns the usage and cost of every model call since New or the
// last Clear, compaction calls included.
func (a *Agent) Usage() wire.Usage { return wireUsage(a.meter.Total()) }

// Clear empties the transcript and resets the cumulative usage.
func (a *Agent) Clear() error {
	a.mu.Lock()
	a.msgs = nil
	a.gen++
	a.context = 0
	a.resetBound()
	a.mu.Unlock()
	a.meter.Reset()
	return nil
}

// SetModel switches the model used from the next model call on. The
// provider stays the same.
func (a *Agent) SetModel(m models.Model) error {
	a.mu.Lock()
	level := a.reasoning
	a.mu.Unlock()
	return a.SetModelReasoning(m, level)
}

// SetModelReasoning switches the model and the reasoning level (""
// for the model's default) used from the next model call on; the model
// must take the level. Like SetModel, it must not overlap a prompt.
func (a *Agent) SetModelReasoning(m models.Model, level string) error {
	if m.ID == "" {
		return errors.New("agent: no model id")
	}
	if err := m.TakesEffort(level); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.mu.Lock()
	a.model, a.reasoning = m, level
	a.mu.Unlock()
	return nil
}

// Reasoning returns the reasoning level, "" for the model's default.
func (a *Agent) Reasoning() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reasoning
}

// SetTranscript replaces the transcript, for example with one restored
// from a session file. It is refused when msgs is not a valid transcript
// (see Validate). Messages without a time get the current time.
func (a *Agent) SetTranscript(msgs []llm.Message) error {
	if err := Validate(msgs); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	msgs = slices.Clone(msgs)
	now := a.timeNow()
	for i := range msgs {
		if msgs[i].Time.IsZero() {
			msgs[i].Time = now
		} else {
			msgs[i].Time = msgs[i].Time.UTC()
		}
	}
	a.mu.Lock()
	a.msgs = msgs
	a.gen++
	a.context = 0
	a.resetBound()
	a.mu.Unlock()
	return nil
}

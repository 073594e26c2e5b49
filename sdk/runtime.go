// Package sdk embeds the zot agent runtime in a Go program.
//
// A [Runtime] owns one agent: one provider, one model, one working
// directory, one transcript. [Runtime.Prompt] runs the agent and returns a
// channel of events that ends with a *wire.DoneEvent. The events are the
// generated types of package [zot.dev/zot/sdk/wire]: a value received here
// marshals to exactly the line `zot rpc` prints for it.
//
// One prompt or compaction runs at a time per Runtime; an overlapping
// call returns [ErrBusy]. Spawn several Runtimes for several projects.
package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/providers"
	"zot.dev/zot/internal/session"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Event is one event of a prompt or compaction.
type Event = wire.Event

// ErrBusy is returned when a prompt or compaction is started, or the
// transcript or model changed, while another prompt or compaction runs.
var ErrBusy = errors.New("zot: a prompt or compaction is already running")

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("zot: runtime closed")

// Version is zot's build version, set by the linker for releases.
var Version = "0.1.0-dev"

// ProtocolVersion is the major version of the wire protocol.
const ProtocolVersion = 1

// Image is an image attached to a prompt.
type Image struct {
	// MIMEType is the format the caller claims; the bytes are sniffed and
	// only image/png, image/jpeg, image/gif and image/webp are accepted.
	MIMEType string
	// Data is the image's bytes.
	Data []byte
}

// Runtime is an embedded agent. Its methods are safe for concurrent use.
type Runtime struct {
	cfg      Config
	provider string
	catalog  *models.Catalog
	agent    *agent.Agent
	cwd      string

	mu      sync.Mutex
	seq     int64
	running *run // the prompt or compaction in flight, or nil
	closed  bool
	closing chan struct{}  // closed by Close
	session *session.File  // nil without Config.SessionFile
	wg      sync.WaitGroup // in-flight runs
}

// run is one prompt or compaction in flight.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New builds a Runtime from cfg. It fails on an unknown provider, model
// file, script or tool name, and on a directory that does not exist.
func New(cfg Config) (*Runtime, error) {
	if cfg.Provider == "" {
		return nil, errors.New("zot: Config.Provider is required")
	}
	cwd := cfg.CWD
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("zot: working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("zot: working directory: %w", err)
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("zot: working directory %s is not a directory", cwd)
	}
	catalog := models.Builtin()
	if cfg.ModelsFile != "" {
		if catalog, err = models.Load(cfg.ModelsFile); err != nil {
			return nil, fmt.Errorf("zot: models file: %w", err)
		}
	}
	if !models.KnownProvider(cfg.Provider) {
		return nil, fmt.Errorf("zot: unknown provider %q", cfg.Provider)
	}
	modelID := cfg.Model
	if modelID == "" {
		var ok bool
		if modelID, ok = catalog.Default(cfg.Provider); !ok {
			return nil, fmt.Errorf("zot: provider %s has no default model; set Config.Model", cfg.Provider)
		}
	}
	model := catalog.Resolve(cfg.Provider, modelID)
	p, err := providers.Build(providers.Spec{Name: cfg.Provider, APIKey: cfg.APIKey, BaseURL: cfg.BaseURL, ScriptPath: cfg.Script})
	if err != nil {
		return nil, fmt.Errorf("zot: %w", err)
	}
	all := tools.Builtins(tools.Config{CWD: cwd, BashTimeout: cfg.BashTimeout})
	selected, err := tools.Select(all, cfg.Tools, cfg.NoTools)
	if err != nil {
		return nil, fmt.Errorf("zot: %w", err)
	}
	sys := sysprompt.Options{
		Override: cfg.SystemPrompt,
		Append:   cfg.AppendSystemPrompt,
		CWD:      cwd,
		Tools:    selected,
	}
	a, err := agent.New(agent.Config{
		Provider:         p,
		Model:            model,
		Tools:            selected,
		System:           sysprompt.Builder(sys),
		MaxSteps:         cfg.MaxSteps,
		Reasoning:        cfg.Reasoning,
		AutoCompactOff:   cfg.AutoCompactOff,
		CompactThreshold: cfg.CompactThreshold,
	})
	if err != nil {
		return nil, fmt.Errorf("zot: %w", err)
	}
	r := &Runtime{cfg: cfg, provider: cfg.Provider, catalog: catalog, agent: a, cwd: cwd, closing: make(chan struct{})}
	if cfg.SessionFile != "" {
		f, msgs, err := session.Open(cfg.SessionFile)
		if err != nil {
			return nil, fmt.Errorf("zot: %w", err)
		}
		if err := a.SetTranscript(msgs); err != nil {
			f.Close()
			return nil, fmt.Errorf("zot: resuming %s: %w", cfg.SessionFile, err)
		}
		r.session = f
	}
	return r, nil
}

// PromptOption adjusts one prompt or compaction.
type PromptOption func(*promptOptions)

type promptOptions struct {
	id wire.ID
}

// WithPromptID sets the prompt_id every event of this prompt carries.
func WithPromptID(id wire.ID) PromptOption {
	return func(o *promptOptions) { o.id = id }
}

// Prompt adds a user message and runs the agent until the model stops,
// the step limit is reached, or ctx is cancelled. The returned channel
// carries the events and is closed after the *wire.DoneEvent. A consumer
// that stops reading stalls the run only until ctx is cancelled or the
// Runtime is closed. Prompt returns ErrBusy while another prompt or
// compaction runs.
func (r *Runtime) Prompt(ctx context.Context, text string, images []Image, opts ...PromptOption) (<-chan Event, error) {
	blocks, err := checkPrompt(text, images)
	if err != nil {
		return nil, err
	}
	return r.start(ctx, opts, func(ctx context.Context, emit func(wire.Event)) error {
		return r.agent.Prompt(ctx, text, blocks, emit)
	})
}

// checkPrompt validates a prompt's images and that it is not empty.
func checkPrompt(text string, images []Image) ([]llm.ImageBlock, error) {
	blocks := make([]llm.ImageBlock, 0, len(images))
	for i, img := range images {
		b, err := CheckImage(img.MIMEType, img.Data)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", i, err)
		}
		blocks = append(blocks, b)
	}
	if text == "" && len(blocks) == 0 {
		return nil, errors.New("zot: empty prompt: give text or an image")
	}
	return blocks, nil
}

// PromptSink is Prompt for servers: it runs in the caller's goroutine
// and hands each event to sink as it happens, ending with the
// *wire.DoneEvent, then returns. sink must not block for long: the agent
// waits for it. It returns ErrBusy, ErrClosed or an invalid-prompt error
// without calling sink.
func (r *Runtime) PromptSink(ctx context.Context, text string, images []Image, sink func(Event), opts ...PromptOption) error {
	blocks, err := checkPrompt(text, images)
	if err != nil {
		return err
	}
	return r.runSink(ctx, opts, sink, func(ctx context.Context, emit func(wire.Event)) error {
		return r.agent.Prompt(ctx, text, blocks, emit)
	})
}

// CompactSink is Compact for servers, like PromptSink.
func (r *Runtime) CompactSink(ctx context.Context, instructions string, sink func(Event), opts ...PromptOption) error {
	return r.runSink(ctx, opts, sink, func(ctx context.Context, emit func(wire.Event)) error {
		return r.agent.Compact(ctx, instructions, emit)
	})
}

// runSink claims the runtime and runs work in the caller's goroutine.
func (r *Runtime) runSink(ctx context.Context, opts []PromptOption, sink func(Event), work func(context.Context, func(wire.Event)) error) error {
	ctx, rn, err := r.claim(ctx)
	if err != nil {
		return err
	}
	r.execute(ctx, rn, promptOptionsOf(opts).id, sink, work)
	return nil
}

// execute runs claimed work: its events are stamped and handed to sink, a
// failure adds an error event, the session is saved, the runtime is
// released, and done comes last — after the Runtime is idle again, so a
// caller that starts the next prompt on seeing it never gets ErrBusy.
func (r *Runtime) execute(ctx context.Context, rn *run, id wire.ID, sink func(Event), work func(context.Context, func(wire.Event)) error) {
	defer rn.cancel()
	emit := func(ev wire.Event) {
		ev.SetSeq(r.nextSeq())
		ev.SetPromptID(id)
		sink(ev)
	}
	err := work(ctx, emit)
	if err != nil && !agent.IsAborted(err) {
		emit(errorEvent(err))
	}
	if perr := r.persist(); perr != nil {
		emit(&wire.ErrorEvent{Message: perr.Error(), Code: wire.CodeInternal})
	}
	r.release(rn)
	emit(&wire.DoneEvent{})
}

func promptOptionsOf(opts []PromptOption) promptOptions {
	var o promptOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// claim marks the runtime busy with a new run.
func (r *Runtime) claim(ctx context.Context) (context.Context, *run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, ErrClosed
	}
	if r.running != nil {
		return nil, nil, ErrBusy
	}
	ctx, cancel := context.WithCancel(ctx)
	rn := &run{cancel: cancel, done: make(chan struct{})}
	r.running = rn
	r.wg.Add(1)
	return ctx, rn, nil
}

// release marks the run over.
func (r *Runtime) release(rn *run) {
	r.mu.Lock()
	r.running = nil
	r.mu.Unlock()
	close(rn.done)
	r.wg.Done()
}

// Compact summarises older messages into one, keeping a recent tail. Its
// events end with *wire.CompactDoneEvent (or *wire.ErrorEvent) and then
// *wire.DoneEvent. It returns ErrBusy while another prompt or compaction
// runs.
func (r *Runtime) Compact(ctx context.Context, instructions string, opts ...PromptOption) (<-chan Event, error) {
	return r.start(ctx, opts, func(ctx context.Context, emit func(wire.Event)) error {
		return r.agent.Compact(ctx, instructions, emit)
	})
}

func (r *Runtime) start(ctx context.Context, opts []PromptOption, work func(context.Context, func(wire.Event)) error) (<-chan Event, error) {
	ctx, rn, err := r.claim(ctx)
	if err != nil {
		return nil, err
	}
	size := r.cfg.EventBuffer
	if size <= 0 {
		size = 256
	}
	ch := make(chan Event, size)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(ch)
		// Events the consumer was not ready for after ctx ended (or the
		// Runtime closed) wait here rather than stall the agent; they are
		// delivered, in order, once the run is over.
		var backlog []wire.Event
		sink := func(ev Event) {
			if len(backlog) == 0 {
				select {
				case ch <- ev:
					return
				case <-ctx.Done():
				case <-r.closing:
				}
			}
			backlog = append(backlog, ev)
		}
		r.execute(ctx, rn, promptOptionsOf(opts).id, sink, work)
		for _, ev := range backlog {
			select {
			case ch <- ev:
			case <-r.closing:
				return
			}
		}
	}()
	return ch, nil
}

func (r *Runtime) nextSeq() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return r.seq
}

// NextSeq reserves the next event sequence number. Servers built on the
// Runtime use it for events they write themselves, so that seq stays one
// sequence across everything a process writes.
func (r *Runtime) NextSeq() int64 { return r.nextSeq() }

// errorEvent turns a run's error into its wire form.
func errorEvent(err error) *wire.ErrorEvent {
	var ae *agent.Error
	if errors.As(err, &ae) {
		return &wire.ErrorEvent{Message: ae.Error(), Code: ae.Code}
	}
	return &wire.ErrorEvent{Message: err.Error(), Code: wire.CodeInternal}
}

// Cancel aborts the running prompt or compaction, if any: its events end
// with *wire.TurnEndEvent (stop "aborted") and *wire.DoneEvent. It reports
// whether something was running.
func (r *Runtime) Cancel() bool {
	r.mu.Lock()
	rn := r.running
	r.mu.Unlock()
	if rn == nil {
		return false
	}
	rn.cancel()
	return true
}

// Busy reports whether a prompt or compaction runs.
func (r *Runtime) Busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running != nil
}

// SetModel switches to another model of the same provider. It fails with
// an *UnknownModelError for a model the catalog does not list for the
// provider, and ErrBusy while a prompt or compaction runs.
func (r *Runtime) SetModel(id string) error {
	m, ok := r.catalog.Lookup(r.provider, id)
	if !ok {
		return &UnknownModelError{Provider: r.provider, Model: id}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.running != nil {
		return ErrBusy
	}
	if err := r.agent.SetModel(m); err != nil {
		return err
	}
	return nil
}

// UnknownModelError is returned by SetModel for a model the provider does
// not have.
type UnknownModelError struct {
	Provider, Model string
}

func (e *UnknownModelError) Error() string {
	return fmt.Sprintf("unknown model %q for provider %s (get_models lists them)", e.Model, e.Provider)
}

// Clear drops the transcript and resets the cumulative usage. It returns
// ErrBusy while a prompt or compaction runs.
func (r *Runtime) Clear() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.running != nil {
		return ErrBusy
	}
	if err := r.agent.Clear(); err != nil {
		return err
	}
	return r.persist()
}

// persist brings the session file, if any, up to date.
func (r *Runtime) persist() error {
	if r.session == nil {
		return nil
	}
	if err := r.session.Save(r.agent.Transcript()); err != nil {
		return fmt.Errorf("zot: saving the session: %w", err)
	}
	return nil
}

// State returns a snapshot of the runtime (Queued is left zero: queues
// belong to servers built on the Runtime).
func (r *Runtime) State() wire.StateResult {
	return wire.StateResult{
		Provider:     r.provider,
		Model:        r.agent.Model().ID,
		CWD:          r.cwd,
		MessageCount: int64(r.agent.MessageCount()),
		Busy:         r.Busy(),
		Usage:        r.agent.Usage(),
	}
}

// Messages returns the transcript, oldest first.
func (r *Runtime) Messages() []wire.Message { return r.agent.Messages() }

// Cost returns the cumulative usage and cost since New or the last Clear.
func (r *Runtime) Cost() wire.Usage { return r.agent.Usage() }

// Provider returns the provider id.
func (r *Runtime) Provider() string { return r.provider }

// Model returns the current model id.
func (r *Runtime) Model() string { return r.agent.Model().ID }

// CWD returns the absolute working directory of the tools.
func (r *Runtime) CWD() string { return r.cwd }

// ListModels returns the catalog's models of the runtime's provider,
// sorted by id.
func (r *Runtime) ListModels() []wire.ModelInfo {
	list := r.catalog.List(r.provider)
	out := make([]wire.ModelInfo, 0, len(list))
	for _, m := range list {
		info := wire.ModelInfo{
			ID:            m.ID,
			Provider:      m.Provider,
			ContextWindow: int64(m.ContextWindow),
			MaxOutput:     int64(m.MaxOutput),
			Reasoning:     m.Reasoning,
		}
		if m.Input != 0 || m.Output != 0 || m.CacheRead != 0 || m.CacheWrite != 0 {
			info.Price = &wire.Price{Input: m.Input, Output: m.Output, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite}
		}
		out = append(out, info)
	}
	return out
}

// Close cancels any running prompt or compaction, waits for it to end
// (its tool processes killed), and makes every later call fail with
// ErrClosed. It is safe to call more than once.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.closing)
	}
	rn := r.running
	r.mu.Unlock()
	if rn != nil {
		rn.cancel()
	}
	r.wg.Wait()
	if r.session != nil {
		return r.session.Close()
	}
	return nil
}

// Wait blocks until the running prompt or compaction, if any, has ended.
func (r *Runtime) Wait() {
	r.mu.Lock()
	rn := r.running
	r.mu.Unlock()
	if rn != nil {
		<-rn.done
	}
}

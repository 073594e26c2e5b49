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
	"sync"
	"time"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// Event is one event of a prompt or compaction.
type Event = wire.Event

// ErrBusy is returned when a prompt or compaction is started, or the
// transcript or model changed, while another prompt or compaction runs.
var ErrBusy = engine.ErrBusy

// ErrClosed is returned by every call after Close. It matches
// [client.ErrClosed] with errors.Is, as rpcclient's does.
var ErrClosed error = closedError("zot: runtime closed")

// closedError is ErrClosed's type: its own message, matching
// client.ErrClosed.
type closedError string

func (e closedError) Error() string { return string(e) }

// Is reports whether target is client.ErrClosed.
func (closedError) Is(target error) bool { return target == client.ErrClosed }

// Runtime is a [client.Client]: a program written against that interface
// runs zot in its own process through this package, or in a `zot rpc`
// subprocess through package rpcclient, by changing one constructor.
var _ client.Client = (*Runtime)(nil)

// Version is zot's build version: the one stamped by zot's Makefile, else
// the version of the zot.dev/zot module the program was built with (see
// internal/buildinfo).
var Version = buildinfo.Version()

// ProtocolVersion is the major version of the wire protocol.
const ProtocolVersion = engine.ProtocolVersion

// MaxImageBytes is the largest image a prompt may carry, decoded.
const MaxImageBytes = images.MaxBytes

// Image is an image attached to a prompt: its claimed MIMEType and its
// bytes (sniffed; only image/png, image/jpeg, image/gif and image/webp are
// accepted). It is [client.Image], which rpcclient takes too.
type Image = client.Image

// Runtime is an embedded agent. Its methods are safe for concurrent use.
type Runtime struct {
	host   *engine.Host
	sess   *engine.Session
	buffer int
	// sessions opens Config.SessionStore at the first session command;
	// nil without one.
	sessions func() (*store.Store, error)
	closing  chan struct{}  // closed by Close
	relays   sync.WaitGroup // relays still delivering a prompt's last events (relay)
	tools    runtimeTools   // the Go functions registered as tools (tools.go)
	fleet    *fleet.Remote  // Config.Fleet's client, or nil (fleet.go)
	fleetEnd sync.Once      // Close ends fleet once

	mu     sync.Mutex
	closed bool
}

// New builds a Runtime from cfg. It fails on an unknown provider, model
// file, script or tool name, and on a directory that does not exist; with
// Config.Fleet, with a *FleetError when its zot-fleet client is missing
// or does not reach the cluster.
func New(cfg Config) (*Runtime, error) {
	if cfg.Provider == "" {
		return nil, errors.New("zot: Config.Provider is required")
	}
	var remote *fleet.Remote
	if cfg.Fleet != nil {
		if cfg.Executor != nil {
			return nil, errors.New("zot: Config.Fleet and Config.Executor do not go together: Fleet sets the Executor")
		}
		var err error
		if remote, err = startFleet(&cfg); err != nil { // fleet.go
			return nil, fmt.Errorf("zot: %w", err)
		}
		cfg.Executor = remote
	}
	host := engine.NewHost(engine.HostConfig{})
	sess, err := host.NewSession(cfg)
	if err != nil {
		if remote != nil {
			_ = remote.Close(time.Second)
		}
		return nil, fmt.Errorf("zot: %w", err)
	}
	size := cfg.EventBuffer
	if size <= 0 {
		size = 256
	}
	// What extensions and MCP servers push goes to their OnEvent
	// functions (the session calls them); the Runtime keeps none of it.
	sess.SetNoticeSink(engine.NoticeSink{})
	r := &Runtime{host: host, sess: sess, buffer: size, closing: make(chan struct{}), fleet: remote}
	if dir := cfg.SessionStore; dir != "" {
		r.sessions = sync.OnceValues(func() (*store.Store, error) { return store.Open(context.Background(), dir, cfg.Log) })
	}
	return r, nil
}

// Prompt adds a user message and runs the agent until the model stops,
// the step limit is reached, or ctx is cancelled. The returned channel
// carries the events and is closed after the *wire.DoneEvent. A consumer
// that stops reading stalls the run only until ctx is cancelled or the
// Runtime is closed. Prompt returns ErrBusy while another prompt or
// compaction runs, and an error of code invalid_params for a prompt with
// neither text nor an image, invalid_image for an image it cannot take
// (wire.CodeOf), as zot rpc does.
func (r *Runtime) Prompt(ctx context.Context, text string, images []Image) (<-chan Event, error) {
	blocks, err := checkImages(images)
	if err != nil {
		return nil, err
	}
	// The engine refuses a prompt with neither text nor an image
	// (invalid_params), as it does for every door.
	return r.submit(engine.Work{Ctx: ctx, Prompt: &engine.PromptInput{Text: text, Images: blocks}})
}

// PromptWith is Prompt with the options of one prompt: its images, the
// JSON Schema its final answer must follow, and its own model, reasoning
// level, step and token limits and cost budget (see
// [client.PromptOptions]). A schema that is not one, or a limit out of
// range, fails with an error of code invalid_params; a reasoning level
// the model does not take fails the same way as the prompt is submitted.
func (r *Runtime) PromptWith(ctx context.Context, text string, opts client.PromptOptions) (<-chan Event, error) {
	blocks, err := checkImages(opts.Images)
	if err != nil {
		return nil, err
	}
	in := &engine.PromptInput{Text: text, Images: blocks}
	var retries *int64
	if opts.OutputRetries != nil {
		n := int64(*opts.OutputRetries)
		retries = &n
	}
	if err := in.SetOutput(opts.OutputSchema, retries); err != nil {
		return nil, err
	}
	if err := setOverrides(in, opts); err != nil {
		return nil, err
	}
	return r.submit(engine.Work{Ctx: ctx, Prompt: in})
}

// setOverrides gives in the overrides of opts, when it has any.
func setOverrides(in *engine.PromptInput, opts client.PromptOptions) error {
	if opts.Model == "" && opts.Reasoning == "" && opts.MaxSteps == 0 && opts.MaxTokens == 0 && opts.MaxCostUSD == 0 {
		return nil
	}
	var level *string
	if opts.Reasoning != "" {
		level = &opts.Reasoning
	}
	var steps, tokens *int64
	var budget *float64
	if opts.MaxSteps != 0 {
		n := int64(opts.MaxSteps)
		steps = &n
	}
	if opts.MaxTokens != 0 {
		n := int64(opts.MaxTokens)
		tokens = &n
	}
	if opts.MaxCostUSD != 0 {
		budget = &opts.MaxCostUSD
	}
	return in.SetOverrides(opts.Model, level, steps, tokens, budget)
}

// Compact summarises older messages into one, keeping a recent tail. Its
// events end with *wire.CompactDoneEvent (or *wire.ErrorEvent) and then
// *wire.DoneEvent. It returns ErrBusy while another prompt or compaction
// runs.
func (r *Runtime) Compact(ctx context.Context, instructions string) (<-chan Event, error) {
	return r.submit(engine.Work{Ctx: ctx, Compact: &engine.CompactInput{Instructions: instructions}})
}

// submit starts w, its events relayed to a new channel.
func (r *Runtime) submit(w engine.Work) (<-chan Event, error) {
	if r.isClosed() {
		return nil, ErrClosed
	}
	// The work waits while a channel's worth of events waits for the
	// channel (and it is not aborted): a slow caller slows the agent down.
	sub := engine.NewSubscription[Event](engine.SubscribeOptions{Buffer: r.buffer, Policy: engine.Block})
	w.Events = sub
	ch := make(chan Event, r.buffer)
	r.relays.Add(1)
	if err := r.sess.Submit(w, engine.RefuseBusy, nil); err != nil {
		r.relays.Done()
		if errors.Is(err, engine.ErrClosed) {
			return nil, ErrClosed
		}
		return nil, err
	}
	go r.relay(sub, ch)
	return ch, nil
}

// relay moves a prompt's events to its channel, in order, and closes the
// channel after the done. When the Runtime closes while the caller is not
// taking events, the events still waiting are dropped and the done takes
// the place of the oldest event not taken: the channel always ends with
// it.
func (r *Runtime) relay(sub *engine.Subscription[Event], ch chan Event) {
	defer r.relays.Done()
	defer close(ch)
	for {
		// The session always ends the subscription after the done.
		ev, err := sub.Next(context.Background())
		if err != nil {
			return
		}
		select {
		case ch <- ev:
			continue
		case <-r.closing:
		}
		for ev.Type() != wire.TypeDoneEvent {
			if ev, err = sub.Next(context.Background()); err != nil {
				return
			}
		}
		for {
			select {
			case ch <- ev:
				return
			default:
			}
			select {
			case <-ch:
			default:
			}
		}
	}
}

// checkImages sniffs and bounds a prompt's images. Its error carries
// invalid_image, the code zot rpc refuses the same image with.
func checkImages(list []Image) ([]llm.ImageBlock, error) {
	blocks := make([]llm.ImageBlock, 0, len(list))
	for i, img := range list {
		b, err := images.Check(img.MIMEType, img.Data)
		if err != nil {
			return nil, &wire.Error{Code: wire.CodeInvalidImage, Message: fmt.Sprintf("image %d: %v", i, err), Err: err}
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// enter is the check every method of client.Client makes first, as a
// call to another process would: it fails with ErrClosed after Close and
// with ctx's error when ctx has ended. In process, nothing else of those
// calls blocks.
func (r *Runtime) enter(ctx context.Context) error {
	if r.isClosed() {
		return ErrClosed
	}
	return ctx.Err()
}

// Cancel aborts the running prompt or compaction, if any: its events end
// with *wire.TurnEndEvent (stop "aborted") and *wire.DoneEvent. It reports
// whether something was running.
func (r *Runtime) Cancel(ctx context.Context) (bool, error) {
	if err := r.enter(ctx); err != nil {
		return false, err
	}
	return r.sess.Abort(false, nil).Aborted, nil
}

// Busy reports whether a prompt or compaction runs.
func (r *Runtime) Busy(ctx context.Context) (bool, error) {
	if err := r.enter(ctx); err != nil {
		return false, err
	}
	return r.sess.Busy(), nil
}

// SetModel switches to another model of the same provider. It takes any
// id Config.Model takes: the catalog is advisory, and a model it does not
// list runs with its defaults (see ListModels). It fails with an
// *UnknownModelError for an empty id, and ErrBusy while a prompt or
// compaction runs.
func (r *Runtime) SetModel(ctx context.Context, id string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	return r.mapErr(r.sess.SetModel(id))
}

// UnknownModelError is returned by SetModel when it is given no model id.
type UnknownModelError = engine.UnknownModelError

// Clear drops the transcript and resets the cumulative usage. It returns
// ErrBusy while a prompt or compaction runs.
func (r *Runtime) Clear(ctx context.Context) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	return r.mapErr(r.sess.Clear())
}

// Undo undoes the last turn (turn 0), or turn turn (from 1: the n-th user
// message) and every turn after it: the files they changed get back what
// they held, and the transcript is cut back to before the turn
// (docs/sessions.md, Undo). It fails with an error of code
// changed_outside (wire.CodeOf), restoring nothing, when a file changed
// outside zot since; not_found when there is no such turn; ErrBusy while
// a prompt or compaction runs.
func (r *Runtime) Undo(ctx context.Context, turn int) (wire.UndoResult, error) {
	if err := r.enter(ctx); err != nil {
		return wire.UndoResult{}, err
	}
	res, err := r.sess.Undo(turn)
	return res, r.mapErr(err)
}

// Skills lists the session's skills (docs/skills.md), found as it
// started from Config.Skills: a Runtime finds none unless Config.Skills
// names where to look.
func (r *Runtime) Skills(ctx context.Context) (wire.ListSkillsResult, error) {
	if err := r.enter(ctx); err != nil {
		return wire.ListSkillsResult{}, err
	}
	return r.sess.SkillList(), nil
}

// Agents lists the agent profiles the session's task tool offers, as
// list_agents does: a Runtime reads none unless Config.Agents says where.
func (r *Runtime) Agents(ctx context.Context) (wire.ListAgentsResult, error) {
	if err := r.enter(ctx); err != nil {
		return wire.ListAgentsResult{}, err
	}
	return r.sess.AgentList(), nil
}

// Skill reads a skill's instructions (file empty), or a file or folder
// inside its folder, as the skill tool gives them to the model. It fails
// with an error of code wire.CodeNotFound or wire.CodeInvalidParams (a
// path out of the skill's folder).
func (r *Runtime) Skill(ctx context.Context, name, file string) (wire.GetSkillResult, error) {
	if err := r.enter(ctx); err != nil {
		return wire.GetSkillResult{}, err
	}
	res, err := r.sess.GetSkill(name, file)
	return res, r.mapErr(err)
}

// SetMessages replaces the transcript with msgs, for an embedder that keeps
// transcripts itself: give it what Messages returned (or the messages of
// `get_messages`, decoded). It returns ErrBusy while a prompt or
// compaction runs, and an error, changing nothing, when msgs is not a
// transcript every provider accepts: roles user, assistant and tool; no
// empty message; each assistant message with tool calls followed by one
// tool message answering each call once. An empty time becomes the
// current time. The wire form carries no thinking and no image data: an
// image comes back as a text block naming its format and size. With
// Config.SessionFile the file is rewritten to hold msgs. The cumulative
// usage (Cost) is kept.
func (r *Runtime) SetMessages(msgs []wire.Message) error {
	if r.isClosed() {
		return ErrClosed
	}
	return r.mapErr(r.sess.SetMessages(msgs))
}

// mapErr reports the session's ErrClosed as the Runtime's.
func (r *Runtime) mapErr(err error) error {
	if errors.Is(err, engine.ErrClosed) {
		return ErrClosed
	}
	return err
}

// State returns a snapshot of the runtime.
func (r *Runtime) State(ctx context.Context) (wire.StateResult, error) {
	if err := r.enter(ctx); err != nil {
		return wire.StateResult{}, err
	}
	return r.sess.State(), nil
}

// Messages returns the transcript, oldest first.
func (r *Runtime) Messages(ctx context.Context) ([]wire.Message, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	return r.sess.Messages(), nil
}

// Cost returns the cumulative usage and cost since New or the last Clear.
func (r *Runtime) Cost(ctx context.Context) (wire.Usage, error) {
	if err := r.enter(ctx); err != nil {
		return wire.Usage{}, err
	}
	return r.sess.Usage(), nil
}

// Provider returns the provider id.
func (r *Runtime) Provider() string { return r.sess.Provider() }

// Model returns the current model id.
func (r *Runtime) Model() string { return r.sess.Model() }

// CWD returns the absolute working directory of the tools.
func (r *Runtime) CWD() string { return r.sess.CWD() }

// SessionID is the session's id in Config.SessionStore (the id to give
// Config.SessionID to resume it, and the one `zot sessions list` shows);
// "" when the Config names no store.
func (r *Runtime) SessionID() string { return r.sess.StoredID() }

// ListModels returns the catalog's models of the runtime's provider, and
// the current model also when the catalog does not list it, sorted by id.
func (r *Runtime) ListModels(ctx context.Context) ([]wire.ModelInfo, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	return r.sess.Models(), nil
}

// Close cancels any running prompt or compaction, waits for it to end
// (its tool processes killed; on a fleet, the turn aborted), ends
// Config.Fleet's client, and makes every later call fail with
// ErrClosed. The running prompt's channel still receives its
// *wire.DoneEvent; events its consumer had not taken by then may be
// dropped. It is safe to call more than once.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.closing)
	}
	r.mu.Unlock()
	err := r.host.Close() // the session's extensions and MCP servers stop with it
	r.relays.Wait()
	if r.fleet != nil {
		r.fleetEnd.Do(func() {
			if ferr := r.fleet.Close(5 * time.Second); ferr != nil && err == nil {
				err = fmt.Errorf("zot: ending the fleet client: %w", ferr)
			}
		})
	}
	return err
}

func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Wait blocks until the running prompt or compaction, if any, has ended,
// or ctx ends.
func (r *Runtime) Wait(ctx context.Context) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	return r.mapErr(r.sess.Wait(ctx))
}

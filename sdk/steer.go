package sdk

import (
	"context"
	"encoding/json"
	"errors"

	"zot.dev/zot/internal/engine"
)

// Steer adds text to the running prompt at its next step boundary (after
// the current model call or its tool results): its *wire.UserMessageEvent
// (Kind "steer") comes on that prompt's channel, and Steer returns a nil
// channel. When no prompt runs it becomes a prompt of its own and its
// channel is returned. Past the bounds (64 KiB, 16 waiting) it fails with
// code "limit_exceeded".
func (r *Runtime) Steer(ctx context.Context, text string) (<-chan Event, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	err := r.sess.SteerRunning(text, nil)
	switch {
	case err == nil:
		return nil, nil
	case !errors.Is(err, engine.ErrNotRunning):
		return nil, r.mapErr(err)
	}
	return r.submit(engine.Work{Ctx: ctx, Prompt: &engine.PromptInput{Text: text}})
}

// InjectContext adds system context from source ("client" when empty) to
// the next model call, of the running prompt or the next one, and returns
// how many contexts wait; code "limit_exceeded" past the bounds.
func (r *Runtime) InjectContext(ctx context.Context, text, source string) (int, error) {
	if err := r.enter(ctx); err != nil {
		return 0, err
	}
	n, err := r.sess.InjectContext(text, source)
	return n, r.mapErr(err)
}

// ExternalEvent runs an event from source ("rpc" when empty) carrying
// payload (any JSON value; a string is given to the model as it is) as a
// prompt of its own; the channel carries its events. It fails with
// ErrBusy while a prompt or compaction runs.
func (r *Runtime) ExternalEvent(ctx context.Context, payload json.RawMessage, source string) (<-chan Event, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	in, err := r.sess.EventPrompt(source, payload)
	if err != nil {
		return nil, r.mapErr(err)
	}
	return r.submit(engine.Work{Ctx: ctx, Prompt: in})
}

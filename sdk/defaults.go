package sdk

import (
	"context"
	"encoding/json"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// Config returns the Runtime's prompt defaults: the model, reasoning
// level, step limit and cost budget a prompt uses when its
// client.PromptOptions do not say. They start from the Config New was
// given and live as long as the Runtime.
func (r *Runtime) Config(ctx context.Context) (wire.SessionDefaults, error) {
	if err := r.enter(ctx); err != nil {
		return wire.SessionDefaults{}, err
	}
	return engine.WireDefaults(r.sess.Defaults()), nil
}

// SetConfig replaces the prompt defaults whole and returns them (see
// [client.Client]). Nothing is set when a value is refused: an error of
// code invalid_params (wire.CodeOf), an *UnknownModelError for an empty
// model, ErrBusy while a prompt or compaction runs.
func (r *Runtime) SetConfig(ctx context.Context, defaults wire.SessionDefaults) (wire.SessionDefaults, error) {
	if err := r.enter(ctx); err != nil {
		return wire.SessionDefaults{}, err
	}
	if err := r.sess.SetDefaults(engine.DefaultsOf(defaults)); err != nil {
		return wire.SessionDefaults{}, r.mapErr(err)
	}
	return engine.WireDefaults(r.sess.Defaults()), nil
}

// PatchConfig merges patch, a JSON merge patch (RFC 7396) of the JSON
// form of what Config returns, into the prompt defaults and returns them
// (see [client.Client]); it is refused as SetConfig is.
func (r *Runtime) PatchConfig(ctx context.Context, patch json.RawMessage) (wire.SessionDefaults, error) {
	if err := r.enter(ctx); err != nil {
		return wire.SessionDefaults{}, err
	}
	if err := r.sess.PatchDefaults(patch); err != nil {
		return wire.SessionDefaults{}, r.mapErr(err)
	}
	return engine.WireDefaults(r.sess.Defaults()), nil
}

// Capabilities says what this zot and the Runtime support: its provider,
// the providers, the doors, the features and the limits (MaxLineBytes is
// 0: a Runtime reads no lines).
func (r *Runtime) Capabilities(ctx context.Context) (wire.CapabilitiesResult, error) {
	if err := r.enter(ctx); err != nil {
		return wire.CapabilitiesResult{}, err
	}
	return engine.Capabilities(r.sess.Provider()), nil
}

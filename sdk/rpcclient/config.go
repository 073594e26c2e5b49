package rpcclient

import (
	"context"
	"encoding/json"

	"zot.dev/zot/sdk/wire"
)

// Config sends `get_config`: the session's defaults, which a prompt uses
// when its client.PromptOptions do not say.
func (c *Client) Config(ctx context.Context) (wire.SessionDefaults, error) {
	r, err := call[wire.ConfigResult](ctx, c, &wire.GetConfigCommand{})
	if err != nil {
		return wire.SessionDefaults{}, err
	}
	return r.Config, nil
}

// SetConfig sends `set_config`: the session's defaults replaced whole,
// returned as they are now. zot refuses a value it does not take with
// code "invalid_params" ("unknown_model" for an empty model, "busy" while
// work runs or waits), setting nothing.
func (c *Client) SetConfig(ctx context.Context, defaults wire.SessionDefaults) (wire.SessionDefaults, error) {
	r, err := call[wire.ConfigResult](ctx, c, &wire.SetConfigCommand{Config: defaults})
	if err != nil {
		return wire.SessionDefaults{}, err
	}
	return r.Config, nil
}

// PatchConfig sends `patch_config`: patch, a JSON merge patch (RFC 7396)
// of the defaults' JSON form, merged into them; refused as SetConfig is.
func (c *Client) PatchConfig(ctx context.Context, patch json.RawMessage) (wire.SessionDefaults, error) {
	r, err := call[wire.ConfigResult](ctx, c, &wire.PatchConfigCommand{Patch: patch})
	if err != nil {
		return wire.SessionDefaults{}, err
	}
	return r.Config, nil
}

// Capabilities sends `get_capabilities`: what this zot and this session
// support (its provider, the providers, doors, features and limits).
func (c *Client) Capabilities(ctx context.Context) (wire.CapabilitiesResult, error) {
	r, err := call[wire.CapabilitiesResult](ctx, c, &wire.GetCapabilitiesCommand{})
	if err != nil {
		return wire.CapabilitiesResult{}, err
	}
	return *r, nil
}

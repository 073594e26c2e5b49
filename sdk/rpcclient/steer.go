package rpcclient

import (
	"context"
	"encoding/json"

	"zot.dev/zot/sdk/wire"
)

// Steer sends `steer`: text reaches the running prompt at its next step
// boundary, its user_message (kind steer) on that prompt's channel, and
// Steer returns a nil channel. When no prompt runs it becomes a prompt of
// its own and its channel is returned, as Prompt's.
func (c *Client) Steer(ctx context.Context, text string) (<-chan wire.Event, error) {
	s, err := c.work(ctx, &wire.SteerCommand{Message: text})
	if err != nil {
		return nil, err
	}
	if s.Start.Steered != nil && *s.Start.Steered {
		c.forget(s.ID)
		return nil, nil
	}
	return c.events(ctx, s), nil
}

// FollowUp sends `follow_up`: a prompt queued after the running work.
func (c *Client) FollowUp(ctx context.Context, text string) (<-chan wire.Event, error) {
	s, err := c.work(ctx, &wire.FollowUpCommand{Message: text})
	if err != nil {
		return nil, err
	}
	return c.events(ctx, s), nil
}

// InjectContext sends `inject_context` and returns how many contexts wait
// for the next model call.
func (c *Client) InjectContext(ctx context.Context, text, source string) (int, error) {
	r, err := call[wire.InjectContextResult](ctx, c, &wire.InjectContextCommand{Text: text, Source: source})
	if err != nil {
		return 0, err
	}
	return int(r.Pending), nil
}

// ExternalEvent sends `external_event`: the event runs as a prompt of its
// own, queued when busy; the channel carries its events.
func (c *Client) ExternalEvent(ctx context.Context, payload json.RawMessage, source string) (<-chan wire.Event, error) {
	s, err := c.work(ctx, &wire.ExternalEventCommand{Payload: payload, Source: source})
	if err != nil {
		return nil, err
	}
	return c.events(ctx, s), nil
}

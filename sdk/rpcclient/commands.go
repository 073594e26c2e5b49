package rpcclient

import (
	"context"
	"fmt"

	"zot.dev/zot/sdk/wire"
)

// call sends cmd and decodes its result into a *T.
func call[T any](ctx context.Context, c *Client, cmd wire.Command) (*T, error) {
	resp, err := c.send(ctx, cmd, nil)
	if err != nil {
		return nil, err
	}
	return resultOf[T](resp)
}

// resultOf decodes a successful response's data into a *T.
func resultOf[T any](resp *wire.Response) (*T, error) {
	v, err := resp.Result()
	if err != nil {
		return nil, fmt.Errorf("decoding the %s result: %w", resp.Command, err)
	}
	r, ok := v.(*T)
	if !ok {
		return nil, fmt.Errorf("decoding the %s result: got %T, want %T", resp.Command, v, r)
	}
	return r, nil
}

// Hello introduces the client. When zot was started with
// ZOTCORE_RPC_TOKEN it must be the first command, with that token; a wrong
// token fails with wire.CodeInvalidToken and zot exits.
func (c *Client) Hello(ctx context.Context, token string) (*wire.HelloResult, error) {
	return call[wire.HelloResult](ctx, c, &wire.HelloCommand{Token: token})
}

// Prompt sends a user message with optional images (base64 in Data). It
// returns once zot has answered: the Stream's Start says whether the work
// started or was queued behind other work. Read its events with Next, All
// or Collect. If ctx ends before the answer, the prompt may still run; its
// events are then dropped.
func (c *Client) Prompt(ctx context.Context, message string, images []wire.ImageInput) (*Stream, error) {
	return c.work(ctx, &wire.PromptCommand{Message: message, Images: images})
}

// Compact summarises older messages into one, keeping a recent tail, with
// optional instructions for the summary. Same lifecycle as Prompt; the
// stream ends with compact_done (or error), then done.
func (c *Client) Compact(ctx context.Context, instructions string) (*Stream, error) {
	return c.work(ctx, &wire.CompactCommand{Instructions: instructions})
}

// work sends a prompt or compact with a registered stream.
func (c *Client) work(ctx context.Context, cmd wire.Command) (*Stream, error) {
	s := newStream(cmd.Type())
	resp, err := c.send(ctx, cmd, s)
	if err != nil {
		return nil, err
	}
	start, err := resultOf[wire.StartResult](resp)
	if err != nil {
		return nil, err
	}
	s.Start = *start
	return s, nil
}

// Abort cancels the running prompt or compact: its stream ends with
// turn_end (stop "aborted") then done. With all, queued work is dropped
// too, each ending the same way. It succeeds also when nothing runs.
func (c *Client) Abort(ctx context.Context, all bool) (*wire.AbortResult, error) {
	cmd := &wire.AbortCommand{}
	if all {
		cmd.All = &all
	}
	return call[wire.AbortResult](ctx, c, cmd)
}

// State returns a snapshot of the runtime; answered also while busy.
func (c *Client) State(ctx context.Context) (*wire.StateResult, error) {
	return call[wire.StateResult](ctx, c, &wire.GetStateCommand{})
}

// Messages returns the whole transcript, oldest first.
func (c *Client) Messages(ctx context.Context) ([]wire.Message, error) {
	r, err := call[wire.MessagesResult](ctx, c, &wire.GetMessagesCommand{})
	if err != nil {
		return nil, err
	}
	return r.Messages, nil
}

// Clear drops the transcript and the cumulative usage. It fails with
// wire.CodeBusy while work runs or waits.
func (c *Client) Clear(ctx context.Context) error {
	_, err := c.send(ctx, &wire.ClearCommand{}, nil)
	return err
}

// SetModel switches to another model of the same provider and returns the
// model now in use. It fails with wire.CodeUnknownModel or wire.CodeBusy.
func (c *Client) SetModel(ctx context.Context, model string) (string, error) {
	r, err := call[wire.SetModelResult](ctx, c, &wire.SetModelCommand{Model: model})
	if err != nil {
		return "", err
	}
	return r.Model, nil
}

// Models lists the models of the current provider, sorted by id.
func (c *Client) Models(ctx context.Context) ([]wire.ModelInfo, error) {
	r, err := call[wire.ModelsResult](ctx, c, &wire.GetModelsCommand{})
	if err != nil {
		return nil, err
	}
	return r.Models, nil
}

// AnswerPermission answers the permission_request event whose
// request_id is requestID: wire.PermissionDecisionAllowOnce runs the tool
// call, wire.PermissionDecisionAllowAlways runs it and every later call of
// that tool without asking, wire.PermissionDecisionReject refuses it, with
// reason shown to the model. It fails with wire.CodeUnknownRequest when
// the request no longer waits (it was answered, timed out or aborted).
func (c *Client) AnswerPermission(ctx context.Context, requestID string, decision wire.PermissionDecision, reason string) error {
	_, err := c.send(ctx, &wire.AnswerPermissionCommand{RequestID: requestID, Decision: decision, Reason: reason}, nil)
	return err
}

// Ping checks that zot answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := call[wire.PingResult](ctx, c, &wire.PingCommand{})
	return err
}

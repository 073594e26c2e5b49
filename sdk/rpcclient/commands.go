package rpcclient

import (
	"context"
	"encoding/base64"
	"fmt"

	"zot.dev/zot/sdk/client"
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

// Prompt sends a user message with optional images and returns once zot
// has accepted it (queued behind other work, if any runs); the channel
// carries the work's events and is closed after its done (see
// [client.Client]). When ctx ends before the done, the work, and only it,
// is cancelled (CancelWork): running, its events end with turn_end (stop
// "aborted") and done; queued, it is dropped and ends the same way. When
// zot exits first, the channel ends with an error event (code "internal")
// saying how, and a done.
func (c *Client) Prompt(ctx context.Context, text string, images []client.Image) (<-chan wire.Event, error) {
	in := make([]wire.ImageInput, len(images))
	for i, img := range images {
		in[i] = wire.ImageInput{MIMEType: img.MIMEType, Data: base64.StdEncoding.EncodeToString(img.Data)}
	}
	s, err := c.work(ctx, &wire.PromptCommand{Message: text, Images: in})
	if err != nil {
		return nil, err
	}
	return c.events(ctx, s), nil
}

// PromptWith is Prompt with the options of one prompt: its images, the
// JSON Schema its final answer must follow (output_schema and
// output_retries), and its own model, reasoning, max_steps, max_tokens
// and max_cost_usd (see [client.PromptOptions]). zot refuses a schema
// that is not one, or a value out of range, with code "invalid_params".
func (c *Client) PromptWith(ctx context.Context, text string, opts client.PromptOptions) (<-chan wire.Event, error) {
	in := make([]wire.ImageInput, len(opts.Images))
	for i, img := range opts.Images {
		in[i] = wire.ImageInput{MIMEType: img.MIMEType, Data: base64.StdEncoding.EncodeToString(img.Data)}
	}
	cmd := &wire.PromptCommand{Message: text, Images: in, OutputSchema: opts.OutputSchema, Model: opts.Model, Reasoning: opts.Reasoning}
	if opts.OutputRetries != nil {
		n := int64(*opts.OutputRetries)
		cmd.OutputRetries = &n
	}
	if opts.MaxSteps != 0 {
		n := int64(opts.MaxSteps)
		cmd.MaxSteps = &n
	}
	if opts.MaxTokens != 0 {
		n := int64(opts.MaxTokens)
		cmd.MaxTokens = &n
	}
	if opts.MaxCostUSD != 0 {
		budget := opts.MaxCostUSD
		cmd.MaxCostUSD = &budget
	}
	s, err := c.work(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return c.events(ctx, s), nil
}

// PromptStream sends a user message with optional images (base64 in
// Data). It returns once zot has answered: the Stream's Start says whether
// the work started or was queued behind other work. Read its events with
// Next, All or Collect. If ctx ends before the answer, the prompt may still
// run; its events are then dropped.
//
// Deprecated: Use Prompt, whose channel of events is the shape
// [client.Client] shares with the in-process sdk.Runtime.
func (c *Client) PromptStream(ctx context.Context, message string, images []wire.ImageInput) (*Stream, error) {
	return c.work(ctx, &wire.PromptCommand{Message: message, Images: images})
}

// Compact summarises older messages into one, keeping a recent tail, with
// optional instructions for the summary. Same lifecycle as Prompt; the
// events end with compact_done (or error), then done.
func (c *Client) Compact(ctx context.Context, instructions string) (<-chan wire.Event, error) {
	s, err := c.work(ctx, &wire.CompactCommand{Instructions: instructions})
	if err != nil {
		return nil, err
	}
	return c.events(ctx, s), nil
}

// CompactStream is Compact returning a [*Stream], with PromptStream's
// lifecycle.
//
// Deprecated: Use Compact, whose channel of events is the shape
// [client.Client] shares with the in-process sdk.Runtime.
func (c *Client) CompactStream(ctx context.Context, instructions string) (*Stream, error) {
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

// Cancel aborts the running prompt or compact: its events end with
// turn_end (stop "aborted") then done. Queued work keeps its place (see
// CancelAll). It reports whether something was running.
func (c *Client) Cancel(ctx context.Context) (bool, error) {
	r, err := call[wire.AbortResult](ctx, c, &wire.AbortCommand{})
	if err != nil {
		return false, err
	}
	return r.Aborted, nil
}

// CancelAll aborts the running prompt or compact and drops the queued
// ones, each ending with turn_end (stop "aborted") then done, in the order
// they were sent. (An in-process sdk.Runtime queues nothing, so this is
// the rpc client's own.)
func (c *Client) CancelAll(ctx context.Context) (wire.AbortResult, error) {
	all := true
	r, err := call[wire.AbortResult](ctx, c, &wire.AbortCommand{All: &all})
	if err != nil {
		return wire.AbortResult{}, err
	}
	return *r, nil
}

// CancelWork cancels only the work of the prompt, compact or run_command
// whose id is promptID (a Stream's ID, the prompt_id of its events):
// running, it is aborted; queued, it is dropped, ending with turn_end
// (stop "aborted") and done after the running work's done; ended, it is
// left alone (the result's Aborted false, Dropped 0). Unlike Cancel, it
// never reaches the work after the one meant, however late it comes.
func (c *Client) CancelWork(ctx context.Context, promptID wire.ID) (wire.AbortResult, error) {
	r, err := call[wire.AbortResult](ctx, c, &wire.AbortCommand{PromptID: promptID})
	if err != nil {
		return wire.AbortResult{}, err
	}
	return *r, nil
}

// Abort cancels the running prompt or compact: its stream ends with
// turn_end (stop "aborted") then done. With all, queued work is dropped
// too, each ending the same way. It succeeds also when nothing runs.
//
// Deprecated: Use Cancel, or CancelAll to drop the queue too.
func (c *Client) Abort(ctx context.Context, all bool) (*wire.AbortResult, error) {
	cmd := &wire.AbortCommand{}
	if all {
		cmd.All = &all
	}
	return call[wire.AbortResult](ctx, c, cmd)
}

// Busy reports whether a prompt or compact runs or waits in zot's queue.
func (c *Client) Busy(ctx context.Context) (bool, error) {
	st, err := c.State(ctx)
	return st.Busy, err
}

// Wait blocks until every prompt and compact this client sent has ended
// (its done has arrived, or zot has gone), or ctx ends. Only this client
// sends work to its zot, so zot is then idle.
func (c *Client) Wait(ctx context.Context) error {
	c.mu.Lock()
	idle, closed := c.idle, c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// State returns a snapshot of the runtime; answered also while busy.
func (c *Client) State(ctx context.Context) (wire.StateResult, error) {
	r, err := call[wire.StateResult](ctx, c, &wire.GetStateCommand{})
	if err != nil {
		return wire.StateResult{}, err
	}
	return *r, nil
}

// Cost returns the cumulative usage and cost since zot started or the
// last Clear (get_state's usage).
func (c *Client) Cost(ctx context.Context) (wire.Usage, error) {
	st, err := c.State(ctx)
	return st.Usage, err
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

// Undo undoes the last turn (turn 0), or turn turn (from 1) and every
// turn after it (undo): the files they changed get back what they held,
// and the transcript is cut back to before the turn. It fails with
// wire.CodeChangedOutside (nothing restored), wire.CodeNotFound or
// wire.CodeBusy.
func (c *Client) Undo(ctx context.Context, turn int) (wire.UndoResult, error) {
	cmd := &wire.UndoCommand{}
	if turn > 0 {
		t := int64(turn)
		cmd.Turn = &t
	}
	r, err := call[wire.UndoResult](ctx, c, cmd)
	if err != nil {
		return wire.UndoResult{}, err
	}
	return *r, nil
}

// Skills lists the session's skills (list_skills): offered, shadowed,
// and those that could not be read.
func (c *Client) Skills(ctx context.Context) (wire.ListSkillsResult, error) {
	r, err := call[wire.ListSkillsResult](ctx, c, &wire.ListSkillsCommand{})
	if err != nil {
		return wire.ListSkillsResult{}, err
	}
	return *r, nil
}

// Skill reads a skill's instructions (file empty), or a file or folder
// inside its folder (get_skill). It fails with wire.CodeNotFound or
// wire.CodeInvalidParams (a path out of the skill's folder).
func (c *Client) Skill(ctx context.Context, name, file string) (wire.GetSkillResult, error) {
	r, err := call[wire.GetSkillResult](ctx, c, &wire.GetSkillCommand{Name: name, File: file})
	if err != nil {
		return wire.GetSkillResult{}, err
	}
	return *r, nil
}

// SetModel switches to another model of the same provider (State then
// says which). It fails with wire.CodeUnknownModel or wire.CodeBusy.
func (c *Client) SetModel(ctx context.Context, id string) error {
	_, err := call[wire.SetModelResult](ctx, c, &wire.SetModelCommand{Model: id})
	return err
}

// SetMode switches zot's permission mode (set_mode): ask, accept_edits,
// auto or read_only; the next call that needs a decision sees it, also
// while work runs. It fails with wire.CodeInvalidParams for a mode zot
// does not offer (under --permission deny it offers only read_only).
func (c *Client) SetMode(ctx context.Context, mode wire.PermissionMode) error {
	_, err := call[wire.SetModeResult](ctx, c, &wire.SetModeCommand{Mode: mode})
	return err
}

// SetSandbox changes zot's sandbox (set_sandbox): the mode unless it is
// empty, the network unless network is nil; the next tool call sees it,
// also while work runs. It returns the sandbox in force, and fails with
// wire.CodeInvalidParams for a mode that is not one.
func (c *Client) SetSandbox(ctx context.Context, mode wire.SandboxMode, network *bool) (wire.SandboxState, error) {
	r, err := call[wire.SandboxState](ctx, c, &wire.SetSandboxCommand{Mode: string(mode), Network: network})
	if err != nil {
		return wire.SandboxState{}, err
	}
	return *r, nil
}

// ListModels lists the models of the current provider, sorted by id.
func (c *Client) ListModels(ctx context.Context) ([]wire.ModelInfo, error) {
	r, err := call[wire.ModelsResult](ctx, c, &wire.GetModelsCommand{})
	if err != nil {
		return nil, err
	}
	return r.Models, nil
}

// Models lists the models of the current provider, sorted by id.
//
// Deprecated: Use ListModels, the name [client.Client] shares with the
// in-process sdk.Runtime.
func (c *Client) Models(ctx context.Context) ([]wire.ModelInfo, error) {
	return c.ListModels(ctx)
}

// AnswerPermission answers the permission_request event whose
// request_id is requestID: wire.PermissionDecisionAllowOnce runs the tool
// call, wire.PermissionDecisionAllowAlways runs it and every later call of
// that tool without asking, wire.PermissionDecisionReject refuses it, with
// reason shown to the model. It fails with wire.CodeUnknownRequest when
// the request no longer waits (it was answered, timed out or aborted).
func (c *Client) AnswerPermission(ctx context.Context, requestID string, decision wire.PermissionDecision, reason string) error {
	return c.Answer(ctx, requestID, PermissionAnswer{Decision: decision, Reason: reason})
}

// Answer answers the permission_request event whose request_id is
// requestID with ans, as AnswerPermission does; with ans.Save it also
// keeps the rule in zot's config.json, failing with
// wire.CodeSettingsError (the request still waits) when it cannot.
func (c *Client) Answer(ctx context.Context, requestID string, ans PermissionAnswer) error {
	_, err := c.send(ctx, &wire.AnswerPermissionCommand{RequestID: requestID, Decision: ans.Decision, Reason: ans.Reason, Save: ans.Save, Rule: ans.Rule}, nil)
	return err
}

// Ping checks that zot answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := call[wire.PingResult](ctx, c, &wire.PingCommand{})
	return err
}

// Agents lists the agent profiles the session's task tool offers
// (list_agents): offered, shadowed, and the files left out.
func (c *Client) Agents(ctx context.Context) (wire.ListAgentsResult, error) {
	r, err := call[wire.ListAgentsResult](ctx, c, &wire.ListAgentsCommand{})
	if err != nil {
		return wire.ListAgentsResult{}, err
	}
	return *r, nil
}

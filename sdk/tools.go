package sdk

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// Tool is a tool the program runs itself ([client.Tool]); [client.NewTool] makes
// one of a Go function with a struct input.
type Tool = client.Tool

// sdkClient is the name the Runtime's tools are registered under in its
// session.
const sdkClient = "sdk"

// runtimeTools are the Go functions a Runtime registered as tools.
type runtimeTools struct {
	mu  sync.Mutex
	run map[string]Tool
}

// RegisterTools adds Go functions as tools of the session (see
// [client.Client]): each call of one runs its Run in this process, after
// the session's intercepts and approval, bounded by its Timeout and
// ended by a cancel. It fails with an error of code name_taken for a
// name another tool holds and invalid_params for a bad definition or a
// tool without Run, adding none.
func (r *Runtime) RegisterTools(ctx context.Context, list ...Tool) ([]string, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	defs := make([]engine.ClientTool, len(list))
	for i, t := range list {
		if t.Run == nil {
			return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("zot: tool %q has no Run", t.Name)}
		}
		defs[i] = engine.ClientTool{Name: t.Name, Description: t.Description, Schema: t.Schema, ReadOnly: t.ReadOnly, Timeout: t.Timeout}
	}
	rt := &r.tools
	rt.mu.Lock()
	defer rt.mu.Unlock()
	names, err := r.sess.RegisterClientTools(sdkClient, defs, r.runTool)
	if err != nil {
		return nil, r.mapErr(err)
	}
	if rt.run == nil {
		rt.run = make(map[string]Tool)
	}
	for _, t := range list {
		rt.run[t.Name] = t
	}
	return names, nil
}

// UnregisterTools removes tools the program registered (see
// [client.Client]).
func (r *Runtime) UnregisterTools(ctx context.Context, names ...string) ([]string, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	rt := &r.tools
	rt.mu.Lock()
	defer rt.mu.Unlock()
	left, err := r.sess.UnregisterClientTools(sdkClient, names)
	if err != nil {
		return nil, r.mapErr(err)
	}
	for n := range rt.run {
		if !slices.Contains(left, n) {
			delete(rt.run, n)
		}
	}
	return left, nil
}

// runTool runs a call of a registered Go function.
func (r *Runtime) runTool(ctx context.Context, call engine.ClientToolCall) (tools.Result, error) {
	rt := &r.tools
	rt.mu.Lock()
	t, ok := rt.run[call.Tool]
	rt.mu.Unlock()
	if !ok {
		return tools.Errorf("tool " + call.Tool + " is no longer registered"), nil
	}
	res, err := t.Run(ctx, call.Args)
	if err != nil {
		return tools.Errorf(err.Error()), nil
	}
	return toolResult(res), nil
}

// toolResult is a client.ToolResult as the agent takes it; an image that is not
// usable is said in the text.
func toolResult(res client.ToolResult) tools.Result {
	var out tools.Result
	if res.Text != "" {
		out.Content = append(out.Content, &llm.TextBlock{Text: res.Text})
	}
	if len(res.Images) > 0 {
		blocks, err := checkImages(res.Images)
		if err != nil {
			out.Content = append(out.Content, &llm.TextBlock{Text: "unusable image: " + err.Error()})
			res.IsError = true
		}
		for i := range blocks {
			out.Content = append(out.Content, &blocks[i])
		}
	}
	out.IsError = res.IsError
	return out
}

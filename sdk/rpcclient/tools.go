package rpcclient

import (
	"context"
	"encoding/base64"
	"slices"
	"sync"
	"time"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// clientTools are the Go functions registered as tools, and the calls of
// them under way.
type clientTools struct {
	mu      sync.Mutex
	run     map[string]client.Tool
	running map[string]context.CancelFunc // by call id
}

// RegisterTools registers Go functions as tools of the session
// (register_tools; see [client.Client]). Each client_tool_call of one
// runs its Run in this process, on a goroutine of its own, and its
// result is sent back with client_tool_result; Run's ctx ends with the
// tool's timeout, when the call's tool_result arrives first (an abort),
// or at Close. The call's event still reaches the work's channel.
func (c *Client) RegisterTools(ctx context.Context, tools ...client.Tool) ([]string, error) {
	cmd := &wire.RegisterToolsCommand{Tools: make([]wire.ClientTool, len(tools))}
	for i, t := range tools {
		if t.Run == nil {
			return nil, &Error{Code: wire.CodeInvalidParams, Message: "tool " + t.Name + " has no Run", Command: cmd.Type()}
		}
		w := wire.ClientTool{Name: t.Name, Description: t.Description, Schema: t.Schema}
		if t.ReadOnly {
			w.ReadOnly = &t.ReadOnly
		}
		if t.Timeout > 0 {
			ms := max(t.Timeout.Milliseconds(), 1)
			w.TimeoutMs = &ms
		}
		cmd.Tools[i] = w
	}
	// Known before zot can call them.
	ct := &c.tools
	ct.mu.Lock()
	before := ct.run
	ct.run = make(map[string]client.Tool, len(before)+len(tools))
	for n, t := range before {
		ct.run[n] = t
	}
	for _, t := range tools {
		ct.run[t.Name] = t
	}
	ct.mu.Unlock()
	r, err := call[wire.ToolsResult](ctx, c, cmd)
	if err != nil {
		ct.mu.Lock()
		ct.run = before
		ct.mu.Unlock()
		return nil, err
	}
	return r.Tools, nil
}

// UnregisterTools removes tools registered with RegisterTools
// (unregister_tools; none named: all of them), and returns the names
// left.
func (c *Client) UnregisterTools(ctx context.Context, names ...string) ([]string, error) {
	r, err := call[wire.ToolsResult](ctx, c, &wire.UnregisterToolsCommand{Names: names})
	if err != nil {
		return nil, err
	}
	ct := &c.tools
	ct.mu.Lock()
	for n := range ct.run {
		if !slices.Contains(r.Tools, n) {
			delete(ct.run, n)
		}
	}
	ct.mu.Unlock()
	return r.Tools, nil
}

// toolEvent starts the call of a registered tool, or ends one whose
// tool_result came first (it timed out at zot or was aborted).
func (c *Client) toolEvent(ev wire.Event) {
	ct := &c.tools
	switch e := ev.(type) {
	case *wire.ClientToolCallEvent:
		ct.mu.Lock()
		t, ok := ct.run[e.Tool]
		if !ok {
			ct.mu.Unlock()
			return // not this program's: OnEvent or the work's channel sees it
		}
		ctx, cancel := context.WithTimeout(c.answerCtx, time.Duration(e.TimeoutMs)*time.Millisecond)
		if ct.running == nil {
			ct.running = make(map[string]context.CancelFunc)
		}
		ct.running[e.CallID] = cancel
		ct.mu.Unlock()
		c.answering.Go(func() { c.runTool(ctx, t, e) })
	case *wire.ToolResultEvent:
		ct.mu.Lock()
		cancel := ct.running[e.ID]
		delete(ct.running, e.ID)
		ct.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// runTool runs one call and sends its result. A call that no longer
// waits refuses the result; that is no fault of the program's.
func (c *Client) runTool(ctx context.Context, t client.Tool, e *wire.ClientToolCallEvent) {
	defer func() {
		ct := &c.tools
		ct.mu.Lock()
		if cancel := ct.running[e.CallID]; cancel != nil {
			cancel()
			delete(ct.running, e.CallID)
		}
		ct.mu.Unlock()
	}()
	res, err := t.Run(ctx, e.Args)
	if err != nil {
		res = client.ToolResult{Text: err.Error(), IsError: true}
	}
	if ctx.Err() != nil {
		return
	}
	cmd := &wire.ClientToolResultCommand{CallID: e.CallID, Text: res.Text}
	for _, img := range res.Images {
		cmd.Images = append(cmd.Images, wire.ImageInput{MIMEType: img.MIMEType, Data: base64.StdEncoding.EncodeToString(img.Data)})
	}
	if res.IsError {
		cmd.IsError = &res.IsError
	}
	_, _ = c.send(c.answerCtx, cmd, nil)
}

package exthost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"zot.dev/zot/internal/correlate"
	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/extwire"
)

// extTool is a tool an extension registered: calling it sends tool_call
// and waits for the tool_result.
type extTool struct {
	e       *ext
	name    string
	desc    string
	schema  json.RawMessage
	timeout time.Duration
	// readOnly: the extension says the tool changes nothing.
	readOnly bool
}

// anyObject is the argument schema of a tool that registered none.
var anyObject = json.RawMessage(`{"type":"object"}`)

func newExtTool(e *ext, f *extwire.RegisterToolFrame) *extTool {
	t := &extTool{e: e, name: f.Name, desc: f.Description, schema: f.Schema, timeout: e.h.cfg.ToolTimeout}
	if len(t.schema) == 0 {
		t.schema = anyObject
	}
	if f.TimeoutMs != nil && *f.TimeoutMs > 0 {
		t.timeout = time.Duration(*f.TimeoutMs) * time.Millisecond
	}
	t.readOnly = f.ReadOnly != nil && *f.ReadOnly
	return t
}

// ReadOnly implements tools.ReadOnly: the extension registered the tool
// read_only.
func (t *extTool) ReadOnly() bool { return t.readOnly }

func (t *extTool) Name() string            { return t.name }
func (t *extTool) Description() string     { return t.desc }
func (t *extTool) Schema() json.RawMessage { return t.schema }

// Run sends the call and waits for the result, at most the tool's
// timeout; an abort or a timeout cancels the call at the extension.
func (t *extTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	ans, err := t.e.request(ctx, t.timeout, func(id string) extwire.HostFrame {
		return &extwire.ToolCallFrame{ID: id, Name: t.name, Args: args}
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return tools.Errorf("aborted"), nil
	case errors.Is(err, correlate.ErrTimeout):
		return tools.Errorf(fmt.Sprintf("extension %s gave no result for %s within %s", t.e.name, t.name, t.timeout)), nil
	default:
		return tools.Errorf(fmt.Sprintf("extension %s failed to run %s: %v", t.e.name, t.name, err)), nil
	}
	r, ok := ans.(*extwire.ToolResultFrame)
	if !ok {
		return tools.Errorf(fmt.Sprintf("extension %s answered a tool call with a %s frame", t.e.name, ans.Type())), nil
	}
	return toolResult(r), nil
}

// toolResult turns an extension's tool_result into the tool's result.
func toolResult(r *extwire.ToolResultFrame) tools.Result {
	var res tools.Result
	for i, c := range r.Content {
		switch b := c.(type) {
		case *extwire.TextContent:
			res.Content = append(res.Content, &llm.TextBlock{Text: b.Text})
		case *extwire.ImageContent:
			data, err := images.DecodeBase64(b.Data)
			var img llm.ImageBlock
			if err == nil {
				img, err = images.Check(b.MIMEType, data)
			}
			if err != nil {
				res.Content = append(res.Content, &llm.TextBlock{Text: fmt.Sprintf("content[%d]: unusable image: %v", i, err)})
				res.IsError = true
				continue
			}
			res.Content = append(res.Content, &img)
		}
	}
	if len(res.Content) == 0 {
		res.Content = []llm.Block{&llm.TextBlock{Text: "(extension returned no content)"}}
	}
	if r.IsError != nil && *r.IsError {
		res.IsError = true
	}
	return res
}

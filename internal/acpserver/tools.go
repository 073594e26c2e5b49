package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// toolClient is the name this connection's tools are registered under
// in the engine's sessions: one per connection, so that its tools go
// with it.
func (h *conn) toolClient() string { return fmt.Sprintf("acp-%p", h) }

// registerTools serves _zot/session/register_tools: the engine's
// Session.RegisterClientTools, each call sent back to this client as a
// _zot/tool/call request.
func (h *conn) registerTools(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionRegisterToolsRequest
	if err := decode(req, &p, "sessionId", "tools"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	defs := make([]engine.ClientTool, len(p.Tools))
	for i, t := range p.Tools {
		d := engine.ClientTool{Name: t.Name, ReadOnly: t.ReadOnly != nil && *t.ReadOnly}
		if t.Description != nil {
			d.Description = *t.Description
		}
		if t.InputSchema != nil {
			d.Schema, _ = json.Marshal(t.InputSchema) // a decoded object always encodes
		}
		if t.TimeoutMs != nil {
			d.Timeout = time.Duration(*t.TimeoutMs) * time.Millisecond
		}
		defs[i] = d
	}
	sid := p.SessionID
	names, err := s.eng.RegisterClientTools(h.toolClient(), defs, func(ctx context.Context, call engine.ClientToolCall) (tools.Result, error) {
		return h.callTool(ctx, sid, call)
	})
	if err != nil {
		return h.toolsError(err, "tools", sid)
	}
	return jsonrpc.Result(acp.SessionRegisterToolsResponse{Tools: names})
}

// unregisterTools serves _zot/session/unregister_tools.
func (h *conn) unregisterTools(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionUnregisterToolsRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	names, err := s.eng.UnregisterClientTools(h.toolClient(), p.Names)
	if err != nil {
		return h.toolsError(err, "names", p.SessionID)
	}
	return jsonrpc.Result(acp.SessionUnregisterToolsResponse{Tools: names})
}

// toolsError answers a refused registration: a bad definition, a taken
// name or an unknown one is the params' fault, naming the field.
func (h *conn) toolsError(err error, field, sessionID string) jsonrpc.Reply {
	switch wire.CodeOf(err) {
	case wire.CodeInvalidParams, wire.CodeNameTaken, wire.CodeNotFound:
		return jsonrpc.Fail(withSession(jsonrpc.InvalidParams(field, "%v", err), sessionID))
	}
	return jsonrpc.Fail(h.agent.errorOf(err, sessionID, ""))
}

// callTool asks this client to run a call with _zot/tool/call; the
// request is cancelled when ctx ends (the call's timeout, a cancelled
// turn), and fails at once when the connection closes.
func (h *conn) callTool(ctx context.Context, sessionID string, call engine.ClientToolCall) (tools.Result, error) {
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil || args == nil {
		args = map[string]any{}
	}
	raw, err := h.c.Call(ctx, acp.MethodZotToolCall, acp.ZotToolCallRequest{
		SessionID:  sessionID,
		ToolCallID: call.ID,
		Name:       call.Tool,
		Arguments:  args,
		TimeoutMs:  max(call.Timeout.Milliseconds(), 1),
	})
	if err != nil {
		return tools.Result{}, err
	}
	var res acp.ZotToolCallResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		return tools.Errorf("the client's answer did not decode: " + err.Error()), nil
	}
	var out tools.Result
	if res.Text != nil && *res.Text != "" {
		out.Content = append(out.Content, &llm.TextBlock{Text: *res.Text})
	}
	for i, img := range res.Images {
		mime := ""
		if img.MimeType != nil {
			mime = *img.MimeType
		}
		data, err := images.DecodeBase64(img.Data)
		var b llm.ImageBlock
		if err == nil {
			b, err = images.Check(mime, data)
		}
		if err != nil {
			out.Content = append(out.Content, &llm.TextBlock{Text: fmt.Sprintf("images[%d]: unusable image: %v", i, err)})
			out.IsError = true
			continue
		}
		out.Content = append(out.Content, &b)
	}
	if res.IsError != nil && *res.IsError {
		out.IsError = true
	}
	return out, nil
}

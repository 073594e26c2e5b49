package acpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/llm"
	zsession "zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/sdk/wire"
)

// replayMessage appends the updates that tell m again to out, for
// session/load: user text as user_message_chunk, the assistant's as
// agent_message_chunk, each tool call as tool_call and its result as the
// tool_call_update of its status and output. t carries what the results
// need to know of the calls before them.
func replayMessage(t *turn, m *wire.Message, out []acp.SessionUpdate) []acp.SessionUpdate {
	for _, b := range m.Content {
		switch b := b.(type) {
		case *wire.TextBlock:
			if b.Text == "" {
				continue
			}
			if m.Role == wire.RoleAssistant {
				out = append(out, acp.SessionUpdate{AgentMessageChunk: textChunk(b.Text)})
			} else {
				out = append(out, acp.SessionUpdate{UserMessageChunk: textChunk(b.Text)})
			}
		case *wire.ImageBlock:
			text := "[image " + string(b.MIMEType) + ", " + strconv.FormatInt(b.Bytes, 10) + " bytes]"
			out = append(out, acp.SessionUpdate{UserMessageChunk: textChunk(text)})
		case *wire.ToolCallBlock:
			var a callArgs
			_ = json.Unmarshal(b.Args, &a) // a call with odd arguments still gets a title
			title := callTitle(b.Name, a)
			call := &acp.ToolCall{
				ToolCallID: acp.ToolCallId(b.ID),
				Title:      title,
				Kind:       kindOf(b.Name),
				Status:     acp.ToolCallStatusPending,
				RawInput:   b.Args,
			}
			if a.Path != "" {
				call.Locations = []acp.ToolCallLocation{{Path: a.Path}}
			}
			out = append(out, acp.SessionUpdate{ToolCall: call})
		case *wire.ToolResultBlock:
			out = append(out, t.toolResult(&wire.ToolResultEvent{ID: b.CallID, IsError: b.IsError, Content: b.Content})...)
		}
	}
	return out
}

// replay tells transcript again to c, oldest first, a message at a
// time: each is converted, encoded and queued before the next is looked
// at, so a long session's replay is never held whole in memory, and it
// waits for room in c's queue, so a client that reads slowly gets it at
// its pace. c is attached and not yet answered: the session's other
// updates are held for it until its answer, which follows the replay.
func (s *acpSession) replay(ctx context.Context, transcript []llm.Message, c *conn) error {
	t := &turn{}
	var ups []acp.SessionUpdate
	for i := range transcript {
		m := agent.WireMessage(&transcript[i])
		ups = replayMessage(t, &m, ups[:0])
		for j := range ups {
			frame, err := s.frame(&item{update: &ups[j]})
			if err != nil {
				s.agent.logf("session %s: %v", s.id, err)
				continue
			}
			if err := c.c.Send(ctx, frame); err != nil {
				return fmt.Errorf("replaying session %s: %w", s.id, err)
			}
		}
		clear(ups)
	}
	return nil
}

// promptInput turns an ACP prompt into the engine's: text blocks, and the
// text of embedded resources and resource links, joined; images decoded
// and checked.
func promptInput(blocks []acp.ContentBlock) (*engine.PromptInput, error) {
	var text []string
	in := &engine.PromptInput{}
	for i, b := range blocks {
		field := "prompt[" + strconv.Itoa(i) + "]"
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.Image != nil:
			data, err := base64.StdEncoding.DecodeString(b.Image.Data)
			if err != nil {
				return nil, jsonrpc.InvalidParams(field+".data", "is not base64: %v", err)
			}
			img, err := images.Check(b.Image.MimeType, data)
			if err != nil {
				return nil, jsonrpc.InvalidParams(field, "%v", err)
			}
			in.Images = append(in.Images, img)
		case b.Resource != nil:
			var r struct {
				URI  string  `json:"uri"`
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(b.Resource.Resource, &r); err != nil {
				return nil, jsonrpc.InvalidParams(field+".resource", "%v", err)
			}
			if r.Text == nil {
				return nil, jsonrpc.InvalidParams(field+".resource", "only text resources are supported (a blob was sent)")
			}
			text = append(text, "<resource uri=\""+r.URI+"\">\n"+*r.Text+"\n</resource>")
		case b.ResourceLink != nil:
			text = append(text, "[resource: "+b.ResourceLink.Name+" "+b.ResourceLink.URI+"]")
		case b.Audio != nil:
			return nil, jsonrpc.InvalidParams(field+".type", "audio is not supported (promptCapabilities.audio is false)")
		}
	}
	in.Text = strings.Join(text, "\n\n")
	if in.Text == "" && len(in.Images) == 0 {
		return nil, jsonrpc.InvalidParams("prompt", "is empty: give text or an image")
	}
	return in, nil
}

// sessionList serves session/list.
func (h *conn) sessionList(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.ListSessionsRequest
	if err := decode(req, &p); err != nil {
		return jsonrpc.Fail(err)
	}
	cwd, cursor := "", ""
	if p.CWD != nil {
		cwd = *p.CWD
		if err := checkCWD(cwd); err != nil {
			return jsonrpc.Fail(err)
		}
	}
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	return jsonrpc.Async(func(ctx context.Context) (any, error) { return h.agent.list(ctx, cwd, cursor, h.mayOwn) })
}

// historyPage is the default page of _zot/session/history.
const historyPage = 100

// history serves _zot/session/history: the committed transcript, oldest
// first, of an open session or a stored one.
func (h *conn) history(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionHistoryRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	limit := historyPage
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > 1000 {
			return jsonrpc.Fail(jsonrpc.InvalidParams("limit", "must be from 1 to 1000"))
		}
		limit = int(*p.Limit)
	}
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return jsonrpc.Fail(jsonrpc.InvalidParams("cursor", "is not a cursor this agent gave"))
		}
		start = n
	}
	a := h.agent
	return jsonrpc.Async(func(context.Context) (any, error) {
		var msgs []llm.Message
		if !h.may(p.SessionID) {
			return nil, unknownSession(p.SessionID)
		}
		if s := a.lookup(p.SessionID); s != nil {
			msgs = s.eng.Transcript()
		} else if a.stored(p.SessionID) {
			loaded, err := zsession.Load(a.path(p.SessionID))
			if err != nil {
				return nil, a.errorOf(err, p.SessionID, "")
			}
			msgs = loaded
		} else {
			return nil, appError(acp.ErrorKindUnknownSession, p.SessionID, "no session %q", p.SessionID)
		}
		start := min(start, len(msgs))
		end := min(start+limit, len(msgs))
		out := acp.SessionHistoryResponse{Messages: make([]json.RawMessage, 0, end-start)}
		for i := range msgs[start:end] {
			// Only the page is converted to its wire form.
			b, err := json.Marshal(agent.WireMessage(&msgs[start+i]))
			if err != nil {
				return nil, jsonrpc.Internal(err)
			}
			out.Messages = append(out.Messages, b)
		}
		if end < len(msgs) {
			next := strconv.Itoa(end)
			out.NextCursor = &next
		}
		return out, nil
	})
}

// promptOutput sets the schema the prompt's final answer must follow from
// the request's _meta.zot.outputSchema (and _meta.zot.outputRetries), as
// zot rpc's prompt takes output_schema and output_retries.
func promptOutput(in *engine.PromptInput, meta map[string]any) error {
	z, _ := meta["zot"].(map[string]any)
	sch, ok := z["outputSchema"]
	if !ok || sch == nil {
		return nil
	}
	if _, isObj := sch.(map[string]any); !isObj {
		return jsonrpc.InvalidParams("_meta.zot.outputSchema", "must be a JSON Schema object")
	}
	raw, err := json.Marshal(sch)
	if err != nil {
		return jsonrpc.InvalidParams("_meta.zot.outputSchema", "%v", err)
	}
	var retries *int64
	if r, ok := z["outputRetries"]; ok && r != nil {
		f, isNum := r.(float64)
		if !isNum || f != float64(int64(f)) {
			return jsonrpc.InvalidParams("_meta.zot.outputRetries", "must be an integer")
		}
		n := int64(f)
		retries = &n
	}
	if err := in.SetOutput(raw, retries); err != nil {
		return jsonrpc.InvalidParams("_meta.zot.outputSchema", "%s", err.Error())
	}
	return nil
}

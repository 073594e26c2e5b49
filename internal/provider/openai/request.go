package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// wireRequest is the body of POST /chat/completions without its messages
// and tools, which are added to the encoding after it (see
// [buildRequestCached]).
type wireRequest struct {
	Model               string `json:"model"`
	MaxTokens           int    `json:"max_tokens,omitempty"`
	MaxCompletionTokens int    `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string `json:"reasoning_effort,omitempty"`
	// ResponseFormat asks for a final answer in a JSON shape
	// (ResponseFormatJSONSchema of the openai package: {type:"json_schema",
	// json_schema:{name, schema, strict}}).
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options"`
}

// responseFormat is response_format with a JSON Schema.
type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

// jsonSchema is ResponseFormatJSONSchema.JSONSchema. strict stays false:
// strict mode refuses schemas outside its subset (every property
// required, additionalProperties false), and zot checks the answer
// itself either way.
type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage is one chat message. Content is a string, a []wirePart, or
// nil (JSON null, for an assistant message that only calls tools).
type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
	// ReasoningContent and Reasoning send an assistant message's reasoning
	// back in the field it streamed in: DeepSeek's thinking mode refuses a
	// tool loop whose earlier assistant messages lack their
	// reasoning_content, and ignores it where it is not needed.
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolSpec `json:"function"`
}

type wireToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema stands in for a tool without a schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildRequest encodes req as a streaming Chat Completions body. provider
// is the provider's id: only reasoning it produced is sent back.
func buildRequest(req *llm.Request, provider string) ([]byte, error) {
	return buildRequestCached(req, provider, nil, nil)
}

// effortNone is the reasoning_effort that turns reasoning off.
const effortNone = "none"

// buildRequestCached is buildRequest with the tool list's encoding taken
// from tools when it has not changed and each message's from msgs when it
// was sent before (nil caches: always encode). A cache must only ever see
// one provider id.
func buildRequestCached(req *llm.Request, provider string, tools *reqbody.ToolCache, msgs *reqbody.MessageCache) ([]byte, error) {
	p, err := buildPayload(req, provider, tools, msgs, nil)
	if err != nil {
		return nil, err
	}
	return p.Bytes(), nil
}

// buildPayload is buildRequestCached with the long texts of the body left
// to be encoded as it is sent.
//
// With bufs the body is built in the buffer of one sent before and the
// payload is recycled (reqbody.Payload.Recycle): release it once sent.
func buildPayload(req *llm.Request, provider string, tools *reqbody.ToolCache, msgs *reqbody.MessageCache, bufs *reqbody.Buffers) (*reqbody.Payload, error) {
	w := wireRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	if req.ReasoningModel || req.Reasoning != "" {
		// A level asked of a model zot cannot place is sent too: never
		// dropped in silence.
		w.MaxCompletionTokens = req.MaxTokens
		w.ReasoningEffort = req.Reasoning
		if req.NoChatToolsReasoning && len(req.Tools) > 0 {
			// Such a model answers a request with function tools only
			// with reasoning off; left out, its default effort is refused
			// too.
			w.ReasoningEffort = effortNone
		}
	} else {
		w.MaxTokens = req.MaxTokens
	}
	if len(req.OutputSchema) > 0 {
		w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: "answer", Schema: req.OutputSchema}}
	}
	head, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding json: %w", err)
	}
	frags, err := msgs.Encode(req.Messages, func(m *llm.Message) ([]byte, error) {
		if m.Role == llm.RoleUser && reqbody.LongTextOnly(m) {
			return reqbody.InPlace(), nil
		}
		return reqbody.Fragment(appendMessage(nil, m, provider))
	})
	if err != nil {
		return nil, fmt.Errorf("encoding messages: %w", err)
	}
	var sys []byte
	if req.System != "" {
		if sys, err = json.Marshal(wireMessage{Role: "system", Content: req.System}); err != nil {
			return nil, fmt.Errorf("encoding system prompt: %w", err)
		}
	}
	rawTools, err := reqbody.Tools(req.Tools, tools, encodeTools)
	if err != nil {
		return nil, err
	}
	size := reqbody.Size(frags) + len(sys)
	for i, f := range frags {
		if reqbody.IsInPlace(f) {
			size += len(`{"role":"user","content":[]}`) + len(req.Messages[i].Content)*len(`{"type":"text","text":},`)
		}
	}
	var splices reqbody.Splices
	p := bufs.Payload(head, "messages", size, func(b []byte) []byte {
		return reqbody.AppendArrayWith(b, sys, frags, func(b []byte, i int, f []byte) []byte {
			if reqbody.IsInPlace(f) {
				return appendLongUser(b, &req.Messages[i], &splices)
			}
			return append(b, f...)
		})
	}, rawTools, &splices)
	return p, nil
}

// appendLongUser appends the chat message of m, a user message of only
// text, as appendMessage encodes it, its texts left to splices: one text
// is the content itself, more are text parts.
func appendLongUser(b []byte, m *llm.Message, splices *reqbody.Splices) []byte {
	var texts []string
	for _, blk := range m.Content {
		if t := blk.(*llm.TextBlock); t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	b = append(b, `{"role":"user","content":`...)
	if len(texts) == 1 {
		return append(splices.AppendText(b, texts[0]), '}')
	}
	b = append(b, '[')
	for i, t := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = append(splices.AppendText(b, t), '}')
	}
	return append(b, "]}"...)
}

// encodeTools encodes the tool list as function tools.
func encodeTools(list []llm.ToolSpec) ([]byte, error) {
	tools := make([]wireTool, 0, len(list))
	for _, t := range list {
		schema := t.Schema
		if len(schema) == 0 {
			schema = emptySchema
		}
		tools = append(tools, wireTool{Type: "function", Function: wireToolSpec{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, fmt.Errorf("encoding tools: %w", err)
	}
	return b, nil
}

// appendMessage appends the chat messages for one transcript message.
func appendMessage(out []wireMessage, m *llm.Message, provider string) []wireMessage {
	switch m.Role {
	case llm.RoleAssistant:
		return appendAssistant(out, m, provider)
	case llm.RoleTool:
		return appendToolResults(out, m)
	}
	if parts := userParts(m.Content); len(parts) > 0 {
		out = append(out, wireMessage{Role: "user", Content: userContent(parts)})
	}
	return out
}

// userParts converts text and images; empty text is dropped.
func userParts(blocks []llm.Block) []wirePart {
	var parts []wirePart
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.TextBlock:
			if b.Text != "" {
				parts = append(parts, wirePart{Type: "text", Text: b.Text})
			}
		case *llm.ImageBlock:
			parts = append(parts, imagePart(b))
		}
	}
	return parts
}

// userContent is a plain string for a single text part, else the parts.
func userContent(parts []wirePart) any {
	if len(parts) == 1 && parts[0].Type == "text" {
		return parts[0].Text
	}
	return parts
}

func imagePart(b *llm.ImageBlock) wirePart {
	url := "data:" + b.MIME + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
	return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: url}}
}

// appendAssistant sends text and tool calls, and reasoning this provider
// streamed in a compatible server's reasoning_content or reasoning field
// back in that field. A message with only reasoning sends nothing.
func appendAssistant(out []wireMessage, m *llm.Message, provider string) []wireMessage {
	var text, reasoning, reasoningContent strings.Builder
	var calls []wireToolCall
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.ThinkingBlock:
			switch {
			case b.Provider != provider:
			case b.ID == "reasoning_content":
				reasoningContent.WriteString(b.Text)
			case b.ID == "reasoning":
				reasoning.WriteString(b.Text)
			}
		case *llm.TextBlock:
			text.WriteString(b.Text)
		case *llm.ToolCallBlock:
			args := string(b.Args)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, wireToolCall{ID: b.ID, Type: "function", Function: wireFunction{Name: b.Name, Arguments: args}})
		}
	}
	if text.Len() == 0 && len(calls) == 0 {
		return out
	}
	msg := wireMessage{Role: "assistant", ToolCalls: calls, ReasoningContent: reasoningContent.String(), Reasoning: reasoning.String()}
	if text.Len() > 0 {
		msg.Content = text.String()
	}
	return append(out, msg)
}

// appendToolResults sends one tool message per result. Chat Completions
// tool messages carry text only, so images of the results follow in one
// user message, each group introduced by the call it belongs to.
func appendToolResults(out []wireMessage, m *llm.Message) []wireMessage {
	var images []wirePart
	for _, b := range m.Content {
		r, ok := b.(*llm.ToolResultBlock)
		if !ok {
			continue
		}
		var texts []string
		var own []wirePart
		for _, c := range r.Content {
			switch c := c.(type) {
			case *llm.TextBlock:
				if c.Text != "" {
					texts = append(texts, c.Text)
				}
			case *llm.ImageBlock:
				own = append(own, imagePart(c))
			}
		}
		text := strings.Join(texts, "\n")
		switch {
		case text == "" && len(own) > 0:
			text = "(the result is the image in the next message)"
		case text == "":
			text = "(no output)"
		}
		out = append(out, wireMessage{Role: "tool", ToolCallID: r.CallID, Content: text})
		if len(own) > 0 {
			intro := fmt.Sprintf("Image output of tool call %s:", r.CallID)
			if r.Name != "" {
				intro = fmt.Sprintf("Image output of tool call %s (%s):", r.CallID, r.Name)
			}
			images = append(images, wirePart{Type: "text", Text: intro})
			images = append(images, own...)
		}
	}
	if len(images) > 0 {
		out = append(out, wireMessage{Role: "user", Content: images})
	}
	return out
}

package responses

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// wireRequest is the body of POST /responses without its input and
// tools, which are added to the encoding after it (see
// [buildRequestCached]).
type wireRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Reasoning       *wireReasoning `json:"reasoning,omitempty"`
	Include         []string       `json:"include,omitempty"`
	// Text asks for a final answer in a JSON shape (ResponseTextConfig of
	// the openai package: text.format, a ResponseFormatTextJSONSchemaConfig
	// {type:"json_schema", name, schema, strict}).
	Text   *textConfig `json:"text,omitempty"`
	Store  bool        `json:"store"`
	Stream bool        `json:"stream"`
}

// textConfig is the request's text.
type textConfig struct {
	Format textFormat `json:"format"`
}

// textFormat is text.format with a JSON Schema; strict stays false, as
// for Chat Completions.
type textFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary"`
}

// messageItem is a user message of the input, with its parts.
type messageItem struct {
	Type    string     `json:"type"` // "message"
	Role    string     `json:"role"`
	Content []wirePart `json:"content"`
}

// assistantItem is an earlier answer of the model, sent back as the
// Responses API's EasyInputMessage with the assistant role: its text as a
// string and its phase, which OpenAI asks callers to keep and resend on
// every assistant message (openai 7.57.0, src/resources/responses/
// responses.ts, EasyInputMessage).
type assistantItem struct {
	Type    string `json:"type"` // "message"
	Role    string `json:"role"` // "assistant"
	Content string `json:"content"`
	Phase   string `json:"phase,omitempty"`
}

// wirePart is a content part: input_text or input_image.
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

type functionCallItem struct {
	Type      string `json:"type"` // "function_call"
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// functionCallOutputItem carries a tool result. Output is a string, or a
// []wirePart when the result has images.
type functionCallOutputItem struct {
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output any    `json:"output"`
}

// reasoningItem replays a reasoning item of an earlier response.
type reasoningItem struct {
	Type             string        `json:"type"` // "reasoning"
	ID               string        `json:"id"`
	Summary          []wireSummary `json:"summary"`
	Content          []wireSummary `json:"content,omitempty"`
	EncryptedContent string        `json:"encrypted_content"`
}

// wireSummary is a text part of a reasoning item: "summary_text" in its
// summary, "reasoning_text" in its content.
type wireSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// emptySchema stands in for a tool without a schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildRequest encodes req as a streaming, stateless Responses API body.
// provider is the provider's id: only reasoning it produced is sent back.
func buildRequest(req *llm.Request, provider string) ([]byte, error) {
	return buildRequestCached(req, provider, nil, nil)
}

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
		Model:           req.Model,
		Instructions:    req.System,
		MaxOutputTokens: req.MaxTokens,
		Stream:          true,
	}
	if reasons(req) {
		// Encrypted reasoning is what a stateless call can send back; only
		// reasoning models accept asking for it.
		w.Reasoning = &wireReasoning{Effort: req.Reasoning, Summary: "auto"}
		w.Include = []string{"reasoning.encrypted_content"}
	}
	if len(req.OutputSchema) > 0 {
		w.Text = &textConfig{Format: textFormat{Type: "json_schema", Name: "answer", Schema: req.OutputSchema}}
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
	rawTools, err := reqbody.Tools(req.Tools, tools, encodeTools)
	if err != nil {
		return nil, err
	}
	size := reqbody.Size(frags)
	for i, f := range frags {
		if reqbody.IsInPlace(f) {
			size += len(longUserHead+"]}") + len(req.Messages[i].Content)*len(`{"type":"input_text","text":},`)
		}
	}
	var splices reqbody.Splices
	p := bufs.Payload(head, "input", size, func(b []byte) []byte {
		return reqbody.AppendArrayWith(b, nil, frags, func(b []byte, i int, f []byte) []byte {
			if reqbody.IsInPlace(f) {
				return appendLongUser(b, &req.Messages[i], &splices)
			}
			return append(b, f...)
		})
	}, rawTools, &splices)
	return p, nil
}

// longUserHead starts the input item of a user message.
const longUserHead = `{"type":"message","role":"user","content":[`

// appendLongUser appends the input item of m, a user message of only
// text, as appendMessage encodes it, its texts left to splices.
func appendLongUser(b []byte, m *llm.Message, splices *reqbody.Splices) []byte {
	b = append(b, longUserHead...)
	b = splices.AppendTextParts(b, m, `{"type":"input_text","text":`)
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
		// strict is off: zot's schemas have optional properties, which
		// strict mode rejects.
		tools = append(tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, fmt.Errorf("encoding tools: %w", err)
	}
	return b, nil
}

// appendMessage appends the input items of one transcript message.
func appendMessage(out []any, m *llm.Message, provider string) []any {
	if m.Role == llm.RoleAssistant {
		return appendAssistant(out, m, provider)
	}
	var parts []wirePart
	flush := func() {
		if len(parts) > 0 {
			out = append(out, messageItem{Type: "message", Role: "user", Content: parts})
			parts = nil
		}
	}
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.TextBlock:
			if b.Text != "" {
				parts = append(parts, wirePart{Type: "input_text", Text: b.Text})
			}
		case *llm.ImageBlock:
			parts = append(parts, imagePart(b))
		case *llm.ToolResultBlock:
			flush()
			out = append(out, toolOutput(b))
		}
	}
	flush()
	return out
}

// appendAssistant sends text as assistant messages (consecutive text of one
// phase in one message), tool calls as function_call items and this
// provider's reasoning as reasoning items, in transcript order. A reasoning item is sent only when it has its
// encrypted content and id (the call is stateless) and some output of the
// same message follows it (the API rejects reasoning without the item it
// led to).
func appendAssistant(out []any, m *llm.Message, provider string) []any {
	lastOutput := -1
	for i, b := range m.Content {
		switch b := b.(type) {
		case *llm.TextBlock:
			if b.Text != "" {
				lastOutput = i
			}
		case *llm.ToolCallBlock:
			lastOutput = i
		}
	}
	var text strings.Builder
	phase := ""
	flush := func() {
		if text.Len() > 0 {
			out = append(out, assistantItem{Type: "message", Role: "assistant", Content: text.String(), Phase: phase})
			text.Reset()
		}
	}
	for i, b := range m.Content {
		switch b := b.(type) {
		case *llm.TextBlock:
			if b.Text == "" {
				continue
			}
			if b.Phase != phase {
				flush()
				phase = b.Phase
			}
			text.WriteString(b.Text)
		case *llm.ThinkingBlock:
			if b.Provider != provider || b.Data == "" || b.ID == "" || i > lastOutput {
				continue
			}
			flush()
			r := reasoningItem{Type: "reasoning", ID: b.ID, Summary: []wireSummary{}, EncryptedContent: b.Data}
			switch {
			case b.Text == "":
			case b.Raw:
				r.Content = []wireSummary{{Type: "reasoning_text", Text: b.Text}}
			default:
				r.Summary = append(r.Summary, wireSummary{Type: "summary_text", Text: b.Text})
			}
			out = append(out, r)
		case *llm.ToolCallBlock:
			flush()
			args := string(b.Args)
			if args == "" || !json.Valid(b.Args) {
				args = "{}"
			}
			out = append(out, functionCallItem{Type: "function_call", CallID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	flush()
	return out
}

// toolOutput turns a tool result into a function_call_output item: its
// text, or text and image parts when it has images.
func toolOutput(r *llm.ToolResultBlock) functionCallOutputItem {
	var texts []string
	var images []wirePart
	for _, c := range r.Content {
		switch c := c.(type) {
		case *llm.TextBlock:
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		case *llm.ImageBlock:
			images = append(images, imagePart(c))
		}
	}
	text := strings.Join(texts, "\n")
	item := functionCallOutputItem{Type: "function_call_output", CallID: r.CallID, Output: text}
	switch {
	case len(images) > 0 && text != "":
		item.Output = append([]wirePart{{Type: "input_text", Text: text}}, images...)
	case len(images) > 0:
		item.Output = images
	case text == "":
		item.Output = "(no output)"
	}
	return item
}

func imagePart(b *llm.ImageBlock) wirePart {
	url := "data:" + b.MIME + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
	return wirePart{Type: "input_image", ImageURL: url, Detail: "auto"}
}

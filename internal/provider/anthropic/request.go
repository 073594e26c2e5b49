package anthropic

import (
	"encoding/json"
	"fmt"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// defaultMaxTokens is max_tokens when the request leaves it at 0 and the
// model's output limit is unknown; also the room for the answer a thinking
// budget leaves.
const defaultMaxTokens = 8192

// The caps of the max_tokens zot derives from a model's output limit: the
// whole limit is rarely needed, and Anthropic counts max_tokens against
// the output-token rate limit when a request starts. A call that thinks
// gets more, since its thinking counts against max_tokens too.
const (
	maxTokensCap         = 32_000
	maxTokensCapThinking = 64_000
)

// thinkingBudgets maps a reasoning level to a thinking token budget, for
// the models that take only a budget (Claude 4.5 and earlier).
var thinkingBudgets = map[string]int{"low": 2048, "medium": 8192, "high": 24576}

// efforts are the levels output_config.effort takes (OutputConfig.effort
// of @anthropic-ai/sdk 1.14.0: low, medium, high, xhigh, max).
var efforts = map[string]bool{"low": true, "medium": true, "high": true, "xhigh": true, "max": true}

// wireRequest is the body of POST /v1/messages without its messages and
// tools, which are added to the encoding after it (see [buildRequestCached]).
type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    []wireBlock   `json:"system,omitempty"`
	Thinking  *wireThinking `json:"thinking,omitempty"`
	// OutputConfig carries the effort of adaptive thinking and the
	// shape of a structured answer.
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	Stream       bool          `json:"stream"`
}

type outputConfig struct {
	Effort string `json:"effort,omitempty"`
	// Format asks for a final answer in a JSON shape (OutputConfig.format,
	// a JSONOutputFormat {type:"json_schema", schema}, of
	// @anthropic-ai/sdk; OutputConfigParam.Format of anthropic-sdk-go).
	Format *outputFormat `json:"format,omitempty"`
}

// outputFormat is output_config.format.
type outputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

// wireBlock is any content block; Type says which fields apply.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *wireSource     `json:"source,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []wireBlock     `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as base64
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// wireThinking is ThinkingConfigEnabled ({type:"enabled", budget_tokens}),
// ThinkingConfigAdaptive ({type:"adaptive", display}) or
// ThinkingConfigDisabled ({type:"disabled"}) of @anthropic-ai/sdk 1.14.0
// (resources/messages/messages.d.ts).
type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	// Display "summarized" asks for the thinking text: the newer models
	// default to "omitted", which sends only the signature.
	Display string `json:"display,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral marks a prompt-cache breakpoint.
var ephemeral = &cacheControl{Type: "ephemeral"}

// emptySchema stands in for a tool without a schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildRequest encodes req as a streaming Messages API body.
func buildRequest(req *llm.Request) ([]byte, error) {
	return buildRequestCached(req, nil, nil)
}

// cacheMark is the prompt-cache breakpoint member put on the last block of
// the last user message.
const cacheMark = `,"cache_control":{"type":"ephemeral"}`

// buildRequestCached is buildRequest with the tool list's encoding taken
// from tools when it has not changed and each message's from msgs when it
// was sent before (nil caches: always encode).
func buildRequestCached(req *llm.Request, tools *reqbody.ToolCache, msgs *reqbody.MessageCache) ([]byte, error) {
	p, _, err := buildPayload(req, caches{tools: tools, msgs: msgs})
	if err != nil {
		return nil, err
	}
	return p.Bytes(), nil
}

// buildPayload is buildRequestCached with the long texts of the body left
// to be encoded as it is sent. It also returns the fingerprint of the
// request's prefix when the model binds its thinking to it (see
// bound.go), for the thinking blocks of the answer; "" otherwise. Thinking
// blocks that may not be sent back (of another model, or bound to a
// prefix that changed) are left out, with every later one.
//
// The caches of c that are not nil are used: see caches. With c.bufs the
// payload is recycled (reqbody.Payload.Recycle): release it once sent.
func buildPayload(req *llm.Request, c caches) (*reqbody.Payload, string, error) {
	heads, tools, msgs, bufs := c.head, c.tools, c.msgs, c.bufs
	w := wireRequest{
		Model:  req.Model,
		Stream: true,
	}
	if err := setThinking(&w, req); err != nil {
		return nil, "", err
	}
	if len(req.OutputSchema) > 0 {
		if w.OutputConfig == nil {
			w.OutputConfig = &outputConfig{}
		}
		w.OutputConfig.Format = &outputFormat{Type: "json_schema", Schema: req.OutputSchema}
	}
	head, err := heads.Get(keyOf(&w), req.System, func() ([]byte, error) {
		if req.System != "" {
			w.System = []wireBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
		}
		return json.Marshal(w)
	})
	if err != nil {
		return nil, "", fmt.Errorf("encoding json: %w", err)
	}
	rawTools, err := reqbody.Tools(req.Tools, tools, encodeTools)
	if err != nil {
		return nil, "", err
	}
	messages := req.Messages
	frags, err := msgs.Encode(messages, encodeBlocks)
	if err != nil {
		return nil, "", fmt.Errorf("encoding messages: %w", err)
	}
	if sent, err := sendable(req, req.System, rawTools, frags); err != nil {
		return nil, "", fmt.Errorf("encoding messages: %w", err)
	} else if len(sent) > 0 && &sent[0] != &messages[0] {
		messages = sent
		if frags, err = msgs.Encode(messages, encodeBlocks); err != nil {
			return nil, "", fmt.Errorf("encoding messages: %w", err)
		}
	}
	prefix := ""
	if req.BoundThinking {
		sent := *req
		sent.Messages = messages
		prefix = requestPrefix(&sent, req.System, rawTools, frags)
	}
	size := reqbody.Size(frags) + inPlaceLen(messages, frags) + len(cacheMark)
	var splices reqbody.Splices
	p := bufs.Payload(head, "messages", size, func(b []byte) []byte {
		return appendMessages(b, messages, frags, &splices)
	}, rawTools, &splices)
	return p, prefix, nil
}

// caches are what a provider keeps from one request to the next to build
// the next: the head (the members before the messages), the tool list,
// each message's encoding, and the buffer of the last body sent. A nil
// one is not used: what it would keep is encoded or allocated afresh.
type caches struct {
	head  *headCache
	tools *reqbody.ToolCache
	msgs  *reqbody.MessageCache
	bufs  *reqbody.Buffers
}

// headCache holds the last request's head.
type headCache = reqbody.HeadCache[headKey]

// headKey is what a request's head is made of besides its system prompt:
// the members of a wireRequest without System, by value.
type headKey struct {
	model, effort string
	maxTokens     int
	thinking      wireThinking
	thinks        bool // thinking is set
	configured    bool // output_config is set
	stream        bool
	format        string // output_config.format's schema
}

// keyOf returns the key of w's head.
func keyOf(w *wireRequest) headKey {
	k := headKey{model: w.Model, maxTokens: w.MaxTokens, stream: w.Stream}
	if w.Thinking != nil {
		k.thinking, k.thinks = *w.Thinking, true
	}
	if w.OutputConfig != nil {
		k.effort, k.configured = w.OutputConfig.Effort, true
		if f := w.OutputConfig.Format; f != nil {
			k.format = string(f.Schema)
		}
	}
	return k
}

// setThinking sets the thinking, effort and max_tokens of w. A model whose
// catalog entry says it takes a budget gets thinking {type:"enabled",
// budget_tokens} for low, medium and high; every other model (Claude 5,
// Opus 4.6 and later, and ids no family rule places) gets adaptive
// thinking with the level in output_config.effort. "none" turns thinking
// off (thinking {type:"disabled"}, which a model that thinks by default
// needs to be told). A model that always thinks, or thinks by default
// with its thinking hidden, gets adaptive thinking when no level is
// given. Adaptive thinking asks for the summarized display, so thinking
// deltas carry text.
func setThinking(w *wireRequest, req *llm.Request) error {
	thinks := req.AlwaysReasons || req.ThinksByDefault
	switch r := req.Reasoning; {
	case r == "none":
		if req.AlwaysReasons {
			return fmt.Errorf("model %s always thinks: reasoning level %q is not taken", req.Model, r)
		}
		thinks = false
		w.Thinking = &wireThinking{Type: "disabled"}
	case r != "" && req.ReasoningControl == llm.ReasoningBudget:
		budget, ok := thinkingBudgets[r]
		if !ok {
			return fmt.Errorf("unsupported reasoning level %q for a thinking budget (want none, low, medium or high)", r)
		}
		thinks = true
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
	case r != "":
		if !efforts[r] {
			return fmt.Errorf("unsupported reasoning level %q (want none, low, medium, high, xhigh or max)", r)
		}
		thinks = true
		w.Thinking = &wireThinking{Type: "adaptive", Display: "summarized"}
		w.OutputConfig = &outputConfig{Effort: r}
	case thinks:
		w.Thinking = &wireThinking{Type: "adaptive", Display: "summarized"}
	}
	w.MaxTokens = maxTokens(req, thinks)
	if w.Thinking != nil && w.Thinking.BudgetTokens > 0 && w.MaxTokens <= w.Thinking.BudgetTokens {
		w.MaxTokens = w.Thinking.BudgetTokens + defaultMaxTokens
	}
	return nil
}

// maxTokens is the request's MaxTokens, or when it is 0 a default derived
// from the model's output limit: the limit, capped at 32,000 tokens, or at
// 64,000 when the call thinks. With no known limit it is 8,192.
func maxTokens(req *llm.Request, thinks bool) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	if req.MaxOutput <= 0 {
		return defaultMaxTokens
	}
	limit := maxTokensCap
	if thinks {
		limit = maxTokensCapThinking
	}
	return min(req.MaxOutput, limit)
}

// role is the Messages API role of a transcript message: tool results
// travel as user messages.
func role(m *llm.Message) string {
	if m.Role == llm.RoleAssistant {
		return "assistant"
	}
	return "user"
}

// appendMessages appends the messages array built from the encoded blocks
// of each transcript message: messages without blocks are skipped,
// consecutive messages of one role merged into one, and the last block of
// the last user message marked as a prompt-cache breakpoint. The texts of
// a message written in place (reqbody.InPlace) are left to splices.
func appendMessages(b []byte, msgs []llm.Message, frags [][]byte, splices *reqbody.Splices) []byte {
	mark := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if len(frags[i]) > 0 && role(&msgs[i]) == "user" {
			mark = i
			break
		}
	}
	return reqbody.AppendGroupedWith(b, frags, func(i int) string { return role(&msgs[i]) }, "content",
		func(b []byte, i int, f []byte) []byte {
			if reqbody.IsInPlace(f) {
				b = appendTexts(b, &msgs[i], splices)
			} else {
				b = append(b, f...)
			}
			if i == mark {
				// The fragment ends with the closing brace of its last block.
				b = append(append(b[:len(b)-1], cacheMark...), '}')
			}
			return b
		})
}

// textBlock is what encodes one text block besides its text.
const textBlock = `{"type":"text","text":}`

// appendTexts appends the blocks of m, which holds only text, as
// encodeBlocks encodes them, each text left to splices.
func appendTexts(b []byte, m *llm.Message, splices *reqbody.Splices) []byte {
	return splices.AppendTextParts(b, m, textBlock[:len(textBlock)-1])
}

// inPlaceLen returns at most how many bytes the messages written in place
// add to the body beyond their one-byte fragments, their texts not
// counted.
func inPlaceLen(msgs []llm.Message, frags [][]byte) int {
	n := 0
	for i, f := range frags {
		if reqbody.IsInPlace(f) {
			n += len(msgs[i].Content) * (len(textBlock) + 1)
		}
	}
	return n
}

// encodeBlocks encodes the blocks m sends, comma-separated without the
// enclosing brackets; nothing when it sends none. A message of long text
// only gets reqbody.InPlace instead.
func encodeBlocks(m *llm.Message) ([]byte, error) {
	if reqbody.LongTextOnly(m) {
		return reqbody.InPlace(), nil
	}
	blocks := make([]wireBlock, 0, len(m.Content))
	for _, b := range m.Content {
		if wb, ok := mapBlock(b); ok {
			blocks = append(blocks, wb)
		}
	}
	return reqbody.Fragment(blocks)
}

// encodeTools encodes the tool list, with a cache breakpoint on the last
// tool so the system prompt and tools are cached together.
func encodeTools(list []llm.ToolSpec) ([]byte, error) {
	tools := make([]wireTool, 0, len(list))
	for _, t := range list {
		schema := t.Schema
		if len(schema) == 0 {
			schema = emptySchema
		}
		tools = append(tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	tools[len(tools)-1].CacheControl = ephemeral
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, fmt.Errorf("encoding tools: %w", err)
	}
	return b, nil
}

// mapBlock converts one transcript block, reporting false for blocks that
// are not sent (empty text, foreign or unsigned thinking).
func mapBlock(b llm.Block) (wireBlock, bool) {
	switch b := b.(type) {
	case *llm.TextBlock:
		if b.Text == "" {
			return wireBlock{}, false
		}
		return wireBlock{Type: "text", Text: b.Text}, true
	case *llm.ImageBlock:
		return imageBlock(b), true
	case *llm.ThinkingBlock:
		if b.Provider != providerName {
			return wireBlock{}, false
		}
		if b.Redacted {
			return wireBlock{Type: "redacted_thinking", Data: b.Data}, b.Data != ""
		}
		if b.Signature == "" {
			return wireBlock{}, false
		}
		text := b.Text
		return wireBlock{Type: "thinking", Thinking: &text, Signature: b.Signature}, true
	case *llm.ToolCallBlock:
		input := json.RawMessage(b.Args)
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		return wireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: input}, true
	case *llm.ToolResultBlock:
		wb := wireBlock{Type: "tool_result", ToolUseID: b.CallID, IsError: b.IsError}
		for _, c := range b.Content {
			switch c := c.(type) {
			case *llm.TextBlock:
				if c.Text != "" {
					wb.Content = append(wb.Content, wireBlock{Type: "text", Text: c.Text})
				}
			case *llm.ImageBlock:
				wb.Content = append(wb.Content, imageBlock(c))
			}
		}
		return wb, true
	}
	return wireBlock{}, false
}

func imageBlock(b *llm.ImageBlock) wireBlock {
	return wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: b.MIME, Data: b.Data}}
}

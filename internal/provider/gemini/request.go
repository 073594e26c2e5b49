package gemini

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// thinkingBudget is the thinking token budget of a reasoning effort, for
// Gemini 2.x.
func thinkingBudget(effort string) (int, bool) {
	switch effort {
	case "low":
		return 2048, true
	case "medium":
		return 8192, true
	case "high":
		return 24576, true
	}
	return 0, false
}

// thinkingLevel is the thinkingLevel of a reasoning level, for Gemini 3
// and later: the ThinkingLevel enum of @google/genai 3.3.0
// (dist/genai.d.ts: MINIMAL, LOW, MEDIUM, HIGH, XHIGH).
func thinkingLevel(level string) (string, bool) {
	switch level {
	case "minimal", "low", "medium", "high", "xhigh":
		return strings.ToUpper(level), true
	}
	return "", false
}

// headroom is added to a max output that a thinking budget would fill:
// Gemini counts thinking towards maxOutputTokens.
const headroom = 8192

// skipSignature is the value Gemini documents for a function call whose
// thought signature is unknown (history from another model): it asks the
// API not to validate the signature.
const skipSignature = "skip_thought_signature_validator"

// wireRequest is the body of POST models/{model}:streamGenerateContent
// without its contents and tools, which are added to the encoding after it
// (see [buildRequestCached]).
type wireRequest struct {
	SystemInstruction *wireContent      `json:"systemInstruction,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

// wirePart is one part of a content; exactly one of Text, InlineData,
// FunctionCall and FunctionResponse is set.
type wirePart struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *inlineData       `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type inlineData struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // encoding/json writes []byte as base64
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response resultResponse `json:"response"`
	// Parts are media the result holds (Gemini 3 and later).
	Parts []responsePart `json:"parts,omitempty"`
}

// responsePart is a FunctionResponsePart: media inside a function
// response.
type responsePart struct {
	InlineData *inlineData `json:"inlineData"`
}

// resultResponse is a tool result as Gemini documents it: the output under
// "output", or the failure under "error".
type resultResponse struct {
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

type wireTool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
	// ResponseMIMEType and ResponseJSONSchema ask for a final answer in a
	// JSON shape (GenerationConfig.responseMimeType "application/json" and
	// responseJsonSchema, a JSON Schema, of @google/genai).
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts"`
	// ThinkingBudget is nil when not sent; 0 turns thinking off (Gemini
	// 2.5 Flash and Flash-Lite).
	ThinkingBudget *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel  string `json:"thinkingLevel,omitempty"`
}

// buildRequest encodes req as a streamGenerateContent body.
func buildRequest(req *llm.Request) ([]byte, error) {
	return buildRequestCached(req, nil, nil)
}

// messageCaches keeps the encoded messages of the last request, one cache
// for Gemini 3 and later and one for older models, since messages with
// tool calls or tool results encode differently for them (see gemini3).
type messageCaches [2]reqbody.MessageCache

// buildRequestCached is buildRequest with the tool list's encoding (and
// its schema conversion) taken from tools when it has not changed and each
// message's from msgs when it was sent before (nil caches: always encode).
func buildRequestCached(req *llm.Request, tools *reqbody.ToolCache, msgs *messageCaches) ([]byte, error) {
	p, err := buildPayload(req, tools, msgs, nil)
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
func buildPayload(req *llm.Request, tools *reqbody.ToolCache, msgs *messageCaches, bufs *reqbody.Buffers) (*reqbody.Payload, error) {
	var w wireRequest
	if req.System != "" {
		w.SystemInstruction = &wireContent{Parts: []wirePart{{Text: req.System}}}
	}
	gen := generationConfig{MaxOutputTokens: req.MaxTokens}
	if len(req.OutputSchema) > 0 {
		gen.ResponseMIMEType, gen.ResponseJSONSchema = "application/json", req.OutputSchema
	}
	if r := req.Reasoning; r != "" {
		if takesLevel(req) {
			level, ok := thinkingLevel(r)
			if !ok {
				return nil, fmt.Errorf("unsupported reasoning level %q for thinkingLevel (want minimal, low, medium, high or xhigh)", r)
			}
			gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingLevel: level}
		} else if r == "none" {
			off := 0
			gen.ThinkingConfig = &thinkingConfig{ThinkingBudget: &off}
		} else {
			budget, ok := thinkingBudget(r)
			if !ok {
				return nil, fmt.Errorf("unsupported reasoning level %q for a thinking budget (want none, low, medium or high)", r)
			}
			gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}
			if gen.MaxOutputTokens > 0 && gen.MaxOutputTokens <= budget {
				gen.MaxOutputTokens = budget + headroom
			}
		}
	} else if req.ReasoningModel {
		// The model thinks anyway; ask to see the thoughts.
		gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true}
	}
	if gen.MaxOutputTokens != 0 || gen.ThinkingConfig != nil || gen.ResponseMIMEType != "" {
		w.GenerationConfig = &gen
	}
	head, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding json: %w", err)
	}
	current := gemini3(req.Model)
	var cache *reqbody.MessageCache
	if msgs != nil {
		cache = &msgs[0]
		if current {
			cache = &msgs[1]
		}
	}
	transcript := resolveNames(req.Messages)
	frags, err := cache.Encode(transcript, func(m *llm.Message) ([]byte, error) {
		if m.Role == llm.RoleUser && reqbody.LongTextOnly(m) {
			return reqbody.InPlace(), nil
		}
		var parts []wirePart
		if m.Role == llm.RoleAssistant {
			parts = modelParts(m.Content, current)
		} else {
			parts = userParts(m.Content, current)
		}
		return reqbody.Fragment(parts)
	})
	if err != nil {
		return nil, fmt.Errorf("encoding messages: %w", err)
	}
	rawTools, err := reqbody.Tools(req.Tools, tools, encodeTools)
	if err != nil {
		return nil, err
	}
	role := func(i int) string {
		if transcript[i].Role == llm.RoleAssistant {
			return "model"
		}
		return "user"
	}
	size := reqbody.Size(frags)
	for i, f := range frags {
		if reqbody.IsInPlace(f) {
			size += len(transcript[i].Content) * len(`{"text":},`)
		}
	}
	var splices reqbody.Splices
	p := bufs.Payload(head, "contents", size, func(b []byte) []byte {
		return reqbody.AppendGroupedWith(b, frags, role, "parts", func(b []byte, i int, f []byte) []byte {
			if reqbody.IsInPlace(f) {
				return appendLongUser(b, &transcript[i], &splices)
			}
			return append(b, f...)
		})
	}, rawTools, &splices)
	return p, nil
}

// appendLongUser appends the parts of m, a user message of only text, as
// userParts encodes them, their texts left to splices.
func appendLongUser(b []byte, m *llm.Message, splices *reqbody.Splices) []byte {
	return splices.AppendTextParts(b, m, `{"text":`)
}

// encodeTools encodes the tool list as one tool of function
// declarations, each schema reduced to what Gemini accepts.
func encodeTools(list []llm.ToolSpec) ([]byte, error) {
	decls := make([]functionDeclaration, 0, len(list))
	for _, t := range list {
		params, err := parameters(t.Schema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, Parameters: params})
	}
	b, err := json.Marshal([]wireTool{{FunctionDeclarations: decls}})
	if err != nil {
		return nil, fmt.Errorf("encoding tools: %w", err)
	}
	return b, nil
}

// takesLevel reports whether the model sets its reasoning with
// thinkingLevel (Gemini 3 and later, which refuse thinkingBudget) rather
// than thinkingBudget (2.x), as its catalog entry says; an id the catalog
// does not place is taken by its version (see gemini3).
func takesLevel(req *llm.Request) bool {
	switch req.ReasoningControl {
	case llm.ReasoningEffort:
		return true
	case llm.ReasoningBudget:
		return false
	}
	return gemini3(req.Model)
}

// gemini3 reports whether model is of Gemini 3 or later, or an id zot
// cannot place, which it takes as current. Such models validate the
// thought signatures of function calls and take the images of a tool
// result inside its function response; 1.x and 2.x do neither.
func gemini3(model string) bool {
	model = strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(model, "gemini-1") && !strings.HasPrefix(model, "gemini-2")
}

// resolveNames returns msgs with the tool's name set on every tool result
// that has none, taken from the call before it with the result's id, so
// that each message can be encoded on its own. It returns msgs itself when
// no result lacks its name.
func resolveNames(msgs []llm.Message) []llm.Message {
	if !lacksName(msgs) {
		return msgs
	}
	out := make([]llm.Message, len(msgs))
	names := map[string]string{} // tool call id → tool name
	for i, m := range msgs {
		out[i] = m
		var content []llm.Block
		for j, b := range m.Content {
			switch b := b.(type) {
			case *llm.ToolCallBlock:
				names[b.ID] = b.Name
			case *llm.ToolResultBlock:
				if b.Name != "" {
					continue
				}
				if content == nil {
					content = slices.Clone(m.Content)
				}
				named := *b
				named.Name = names[b.CallID]
				content[j] = &named
			}
		}
		if content != nil {
			out[i].Content = content
		}
	}
	return out
}

// lacksName reports whether a tool result of msgs has no tool name.
func lacksName(msgs []llm.Message) bool {
	for i := range msgs {
		for _, b := range msgs[i].Content {
			if r, ok := b.(*llm.ToolResultBlock); ok && r.Name == "" {
				return true
			}
		}
	}
	return false
}

// modelParts converts an assistant message. Gemini's own thoughts go back
// with their signatures; a signature that came on its own (Gemini signs
// the last text part of an answer) rejoins the text before it. Thinking of
// other providers is dropped. When no function call of the message carries
// a signature and the model validates them, the first call gets
// skipSignature.
func modelParts(blocks []llm.Block, signatures bool) []wirePart {
	var parts []wirePart
	firstCall, signed := -1, false
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.TextBlock:
			if b.Text != "" {
				parts = append(parts, wirePart{Text: b.Text})
			}
		case *llm.ThinkingBlock:
			if b.Provider != providerName {
				continue
			}
			if b.Text != "" {
				parts = append(parts, wirePart{Text: b.Text, Thought: true, ThoughtSignature: b.Signature})
				continue
			}
			if n := len(parts); n > 0 && b.Signature != "" {
				if last := &parts[n-1]; last.Text != "" && !last.Thought && last.ThoughtSignature == "" {
					last.ThoughtSignature = b.Signature
				}
			}
		case *llm.ToolCallBlock:
			args := json.RawMessage(b.Args)
			if len(args) == 0 || !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			if firstCall < 0 {
				firstCall = len(parts)
			}
			signed = signed || b.Signature != ""
			parts = append(parts, wirePart{FunctionCall: &functionCall{ID: wireID(b.ID), Name: b.Name, Args: args}, ThoughtSignature: b.Signature})
		}
	}
	if signatures && firstCall >= 0 && !signed {
		parts[firstCall].ThoughtSignature = skipSignature
	}
	return parts
}

// userParts converts a prompt or a batch of tool results. With inline
// (Gemini 3 and later) the images of a result go inside its function
// response. Older models take text only there, so the images of results
// follow the responses, each group introduced by the call it belongs to.
func userParts(blocks []llm.Block, inline bool) []wirePart {
	var parts, images []wirePart
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.TextBlock:
			if b.Text != "" {
				parts = append(parts, wirePart{Text: b.Text})
			}
		case *llm.ImageBlock:
			parts = append(parts, imagePart(b))
		case *llm.ToolResultBlock:
			resp, own := toolResult(b, inline)
			fr := &functionResponse{ID: wireID(b.CallID), Name: b.Name, Response: resp}
			parts = append(parts, wirePart{FunctionResponse: fr})
			switch {
			case len(own) == 0:
			case inline:
				for _, img := range own {
					fr.Parts = append(fr.Parts, responsePart{InlineData: inlineOf(img)})
				}
			default:
				images = append(images, wirePart{Text: fmt.Sprintf("Image output of tool call %s (%s):", b.CallID, b.Name)})
				for _, img := range own {
					images = append(images, imagePart(img))
				}
			}
		}
	}
	return append(parts, images...)
}

// toolResult returns the response of a tool result and its images; inline
// says whether the images travel inside the response or after it.
func toolResult(r *llm.ToolResultBlock, inline bool) (resultResponse, []*llm.ImageBlock) {
	var texts []string
	var images []*llm.ImageBlock
	for _, c := range r.Content {
		switch c := c.(type) {
		case *llm.TextBlock:
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		case *llm.ImageBlock:
			images = append(images, c)
		}
	}
	text := strings.Join(texts, "\n")
	switch {
	case text == "" && len(images) > 0 && inline:
		text = "(the result is the attached image)"
	case text == "" && len(images) > 0:
		text = "(the result is the image that follows)"
	case text == "":
		text = "(no output)"
	}
	if r.IsError {
		return resultResponse{Error: text}, images
	}
	return resultResponse{Output: text}, images
}

func imagePart(b *llm.ImageBlock) wirePart {
	return wirePart{InlineData: inlineOf(b)}
}

// inlineOf is an image's bytes as Gemini takes them.
func inlineOf(b *llm.ImageBlock) *inlineData {
	return &inlineData{MimeType: b.MIME, Data: b.Data}
}

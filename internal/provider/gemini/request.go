package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"zot.dev/zot/internal/provider/toolcache"

	"zot.dev/zot/internal/llm"
)

// thinkingBudgets maps a reasoning effort to a thinking token budget.
var thinkingBudgets = map[string]int{"low": 2048, "medium": 8192, "high": 24576}

// headroom is added to a max output that a thinking budget would fill:
// Gemini counts thinking towards maxOutputTokens.
const headroom = 8192

// skipSignature is the value Gemini documents for a function call whose
// thought signature is unknown (history from another model): it asks the
// API not to validate the signature.
const skipSignature = "skip_thought_signature_validator"

// wireRequest is the body of POST models/{model}:streamGenerateContent.
type wireRequest struct {
	Contents          []wireContent     `json:"contents"`
	SystemInstruction *wireContent      `json:"systemInstruction,omitempty"`
	Tools             []wireTool        `json:"tools,omitempty"`
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
}

type thinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts"`
	ThinkingBudget  int  `json:"thinkingBudget,omitempty"`
}

// buildRequest encodes req as a streamGenerateContent body.
func buildRequest(req *llm.Request) ([]byte, error) {
	return buildRequestCached(req, nil)
}

// buildRequestCached is buildRequest with the tool list's encoding (and
// its schema conversion) taken from cache when it has not changed (nil:
// always encode).
func buildRequestCached(req *llm.Request, cache *toolcache.Cache) ([]byte, error) {
	w := wireRequest{Contents: mapMessages(req.Messages, signaturesRequired(req.Model))}
	if req.System != "" {
		w.SystemInstruction = &wireContent{Parts: []wirePart{{Text: req.System}}}
	}
	gen := generationConfig{MaxOutputTokens: req.MaxTokens}
	if req.Reasoning != "" {
		budget, ok := thinkingBudgets[req.Reasoning]
		if !ok {
			return nil, fmt.Errorf("unsupported reasoning effort %q (want low, medium or high)", req.Reasoning)
		}
		gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: budget}
		if gen.MaxOutputTokens > 0 && gen.MaxOutputTokens <= budget {
			gen.MaxOutputTokens = budget + headroom
		}
	} else if req.ReasoningModel {
		// The model thinks anyway; ask to see the thoughts.
		gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true}
	}
	if gen != (generationConfig{}) {
		w.GenerationConfig = &gen
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding json: %w", err)
	}
	return toolcache.Append(b, req.Tools, cache, encodeTools)
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

// signaturesRequired reports whether model validates the thought
// signatures of function calls (Gemini 3 and later do; 1.x and 2.x do
// not).
func signaturesRequired(model string) bool {
	model = strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(model, "gemini-1") && !strings.HasPrefix(model, "gemini-2")
}

// mapMessages turns the transcript into contents: the assistant's
// messages are "model" contents, everything else (prompts and tool
// results) "user" contents. Empty contents are skipped and consecutive
// contents of one role merged.
func mapMessages(msgs []llm.Message, signatures bool) []wireContent {
	names := map[string]string{} // tool call id → tool name, for results without a name
	var out []wireContent
	for i := range msgs {
		m := &msgs[i]
		role, parts := "user", []wirePart(nil)
		if m.Role == llm.RoleAssistant {
			role, parts = "model", modelParts(m.Content, names, signatures)
		} else {
			parts = userParts(m.Content, names)
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			continue
		}
		out = append(out, wireContent{Role: role, Parts: parts})
	}
	return out
}

// modelParts converts an assistant message. Gemini's own thoughts go back
// with their signatures; a signature that came on its own (Gemini signs
// the last text part of an answer) rejoins the text before it. Thinking of
// other providers is dropped. When no function call of the message carries
// a signature and the model validates them, the first call gets
// skipSignature.
func modelParts(blocks []llm.Block, names map[string]string, signatures bool) []wirePart {
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
			names[b.ID] = b.Name
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

// userParts converts a prompt or a batch of tool results. Function
// responses carry text only, so the images of results follow them, each
// group introduced by the call it belongs to.
func userParts(blocks []llm.Block, names map[string]string) []wirePart {
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
			name := b.Name
			if name == "" {
				name = names[b.CallID]
			}
			resp, own := toolResult(b)
			parts = append(parts, wirePart{FunctionResponse: &functionResponse{ID: wireID(b.CallID), Name: name, Response: resp}})
			if len(own) > 0 {
				images = append(images, wirePart{Text: fmt.Sprintf("Image output of tool call %s (%s):", b.CallID, name)})
				images = append(images, own...)
			}
		}
	}
	return append(parts, images...)
}

// toolResult returns the response of a tool result and its images.
func toolResult(r *llm.ToolResultBlock) (resultResponse, []wirePart) {
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
	switch {
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
	return wirePart{InlineData: &inlineData{MimeType: b.MIME, Data: b.Data}}
}

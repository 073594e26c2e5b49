package anthropic

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

// fullTranscript holds every kind of block, including ones that must be
// dropped (foreign and unsigned thinking, empty text).
func fullTranscript() *llm.Request {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	jpeg := []byte{0xff, 0xd8, 0xff, 9}
	return &llm.Request{
		Model:     "claude-test",
		System:    "You are zot.",
		Reasoning: "high",
		Tools: []llm.ToolSpec{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "now", Description: "Current time."},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Look at this."}, &llm.ImageBlock{MIME: "image/png", Data: png}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.ThinkingBlock{Provider: "anthropic", Text: "Reading the file.", Signature: "sig-1"},
				&llm.ThinkingBlock{Provider: "anthropic", Redacted: true, Data: "redacted-data"},
				&llm.ThinkingBlock{Provider: "gemini", Text: "foreign", Signature: "g-sig"},
				&llm.ThinkingBlock{Provider: "anthropic", Text: "unsigned, cut off"},
				&llm.TextBlock{Text: ""},
				&llm.TextBlock{Text: "I'll read it."},
				&llm.ToolCallBlock{ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path":"a.go"}`)},
				&llm.ToolCallBlock{ID: "toolu_2", Name: "now", Args: json.RawMessage(`{}`), ArgsError: "not JSON"},
			}},
			{Role: llm.RoleTool, Content: []llm.Block{
				&llm.ToolResultBlock{CallID: "toolu_1", Name: "read", Content: []llm.Block{&llm.TextBlock{Text: "package a"}, &llm.ImageBlock{MIME: "image/jpeg", Data: jpeg}}},
				&llm.ToolResultBlock{CallID: "toolu_2", Name: "now", IsError: true, Content: []llm.Block{&llm.TextBlock{Text: "invalid arguments"}}},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "And now?"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ThinkingBlock{Provider: "openai", Text: "only foreign thinking"}}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Hello?"}}},
		},
	}
}

func TestRequestGolden(t *testing.T) {
	providertest.GoldenRequest(t, dial, fullTranscript())
}

func TestRequestParameters(t *testing.T) {
	tests := []struct {
		name      string
		maxTokens int
		reasoning string
		wantMax   int
		wantBud   int
	}{
		{"defaults", 0, "", 8192, 0},
		{"explicit max", 1000, "", 1000, 0},
		{"low", 0, "low", 8192, 2048},
		{"medium raises max", 0, "medium", 8192 + 8192, 8192},
		{"high raises max", 16000, "high", 24576 + 8192, 24576},
		{"high fits", 64000, "high", 64000, 24576},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.MaxTokens, req.Reasoning = tt.maxTokens, tt.reasoning
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			MaxTokens int `json:"max_tokens"`
			Thinking  *struct {
				Type         string `json:"type"`
				BudgetTokens int    `json:"budget_tokens"`
			} `json:"thinking"`
			System *json.RawMessage `json:"system"`
			Tools  *json.RawMessage `json:"tools"`
			Stream bool             `json:"stream"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		bud := 0
		if w.Thinking != nil {
			if w.Thinking.Type != "enabled" {
				t.Errorf("%s: thinking type %q", tt.name, w.Thinking.Type)
			}
			bud = w.Thinking.BudgetTokens
		}
		if w.MaxTokens != tt.wantMax || bud != tt.wantBud || !w.Stream || w.System != nil || w.Tools != nil {
			t.Errorf("%s: body %s", tt.name, body)
		}
	}
	req := simpleRequest()
	req.Reasoning = "extreme"
	if _, err := buildRequest(req); err == nil {
		t.Error("unknown reasoning effort accepted")
	}
}

func TestRequestCachedMatchesFresh(t *testing.T) {
	providertest.CachedMatchesFreshWith(t, fullTranscript(), buildRequest, buildRequestCached)
}

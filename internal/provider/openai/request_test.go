package openai

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/reqbody"
)

// fullTranscript holds every kind of block, including ones that are not
// sent (reasoning, empty text, an assistant message with only reasoning).
func fullTranscript() *llm.Request {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	jpeg := []byte{0xff, 0xd8, 0xff, 9}
	return &llm.Request{
		Model:  "gpt-test",
		System: "You are zot.",
		Tools: []llm.ToolSpec{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "now"},
		},
		MaxTokens: 4096,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Look at this."}, &llm.ImageBlock{MIME: "image/png", Data: png}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.ThinkingBlock{Provider: "openai", Text: "Reading the file."},
				&llm.TextBlock{Text: ""},
				&llm.TextBlock{Text: "I'll read it."},
				&llm.ToolCallBlock{ID: "call_1", Name: "read", Args: json.RawMessage(`{"path":"a.go"}`)},
				&llm.ToolCallBlock{ID: "call_2", Name: "now", Args: json.RawMessage(`{}`), ArgsError: "not JSON"},
				&llm.ToolCallBlock{ID: "call_3", Name: "read", Args: json.RawMessage(`{"path":"logo.png"}`)},
			}},
			{Role: llm.RoleTool, Content: []llm.Block{
				&llm.ToolResultBlock{CallID: "call_1", Name: "read", Content: []llm.Block{&llm.TextBlock{Text: "package a"}, &llm.ImageBlock{MIME: "image/jpeg", Data: jpeg}}},
				&llm.ToolResultBlock{CallID: "call_2", Name: "now", IsError: true, Content: []llm.Block{&llm.TextBlock{Text: "invalid arguments"}}},
				&llm.ToolResultBlock{CallID: "call_3", Name: "read", Content: []llm.Block{&llm.ImageBlock{MIME: "image/png", Data: png}}},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolCallBlock{ID: "call_4", Name: "now"}}},
			{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: "call_4", Name: "now", Content: []llm.Block{&llm.TextBlock{Text: "noon"}}}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ThinkingBlock{Provider: "openai", Text: "only reasoning"}}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Thanks."}}},
		},
	}
}

func TestRequestGolden(t *testing.T) {
	providertest.GoldenRequest(t, dial, fullTranscript())
}

func TestRequestParameters(t *testing.T) {
	tests := []struct {
		name           string
		maxTokens      int
		reasoning      string
		reasoningModel bool
		want           string
	}{
		{"defaults", 0, "", false, `{"stream":true}`},
		{"max tokens", 100, "", false, `{"max_tokens":100,"stream":true}`},
		// A level the agent lets through for a model zot cannot place
		// (the catalog refuses it for a known model that does not reason)
		// is sent, never dropped in silence.
		{"reasoning asked of an unplaced model", 100, "high", false, `{"max_completion_tokens":100,"reasoning_effort":"high","stream":true}`},
		{"xhigh and max", 0, "max", true, `{"reasoning_effort":"max","stream":true}`},
		{"reasoning model", 100, "", true, `{"max_completion_tokens":100,"stream":true}`},
		{"reasoning model with effort", 100, "low", true, `{"max_completion_tokens":100,"reasoning_effort":"low","stream":true}`},
		{"reasoning model, no max", 0, "high", true, `{"reasoning_effort":"high","stream":true}`},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.MaxTokens, req.Reasoning, req.ReasoningModel = tt.maxTokens, tt.reasoning, tt.reasoningModel
		body, err := buildRequest(req, "openai")
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		if string(w["stream_options"]) != `{"include_usage":true}` {
			t.Errorf("%s: stream_options = %s", tt.name, w["stream_options"])
		}
		if _, ok := w["tools"]; ok {
			t.Errorf("%s: tools sent though there are none", tt.name)
		}
		delete(w, "model")
		delete(w, "messages")
		delete(w, "stream_options")
		got, _ := json.Marshal(w)
		if string(got) != tt.want {
			t.Errorf("%s: parameters = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestRequestCachedMatchesFresh(t *testing.T) {
	const name = "openai"
	fresh := func(req *llm.Request) ([]byte, error) { return buildRequest(req, name) }
	cached := func(req *llm.Request, tools *reqbody.ToolCache, msgs *reqbody.MessageCache) ([]byte, error) {
		return buildRequestCached(req, name, tools, msgs)
	}
	providertest.CachedMatchesFreshWith(t, fullTranscript(), fresh, cached)
}

// TestLongTextSplicedIntoBody: a user message of long text is left out of
// the cache and the body's bytes, and the body read holds exactly the
// encoding the message would have had (one text as the content, more as
// text parts), the same from the cache as fresh.
func TestLongTextSplicedIntoBody(t *testing.T) {
	encode := func(m *llm.Message) ([]byte, error) { return reqbody.Fragment(appendMessage(nil, m, "openai")) }
	providertest.LongTextSpliced(t, "gpt-test", "sys", ",", encode, func() (func(*llm.Request) (*reqbody.Payload, error), func() int) {
		var tools reqbody.ToolCache
		var msgs reqbody.MessageCache
		return func(req *llm.Request) (*reqbody.Payload, error) {
			return buildPayload(req, "openai", &tools, &msgs, nil)
		}, msgs.Reused
	})
}

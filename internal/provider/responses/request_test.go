package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/reqbody"
)

// fullTranscript is a tool loop with every kind of block, including ones
// that are not sent: foreign reasoning, reasoning without encrypted
// content, reasoning that no output follows, empty text.
func fullTranscript() *llm.Request {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	jpeg := []byte{0xff, 0xd8, 0xff, 9}
	return &llm.Request{
		Model:          "gpt-test",
		System:         "You are zot.",
		Reasoning:      "high",
		ReasoningModel: true,
		MaxTokens:      4096,
		Tools: []llm.ToolSpec{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "now"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Look at this."}, &llm.ImageBlock{MIME: "image/png", Data: png}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.ThinkingBlock{Provider: "openai-responses", Text: "**Reading** The file first.", ID: "rs_1", Data: "enc-1"},
				&llm.ThinkingBlock{Provider: "anthropic", Text: "foreign", Signature: "sig"},
				&llm.ThinkingBlock{Provider: "openai-responses", Text: "no encrypted content", ID: "rs_x"},
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
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.ThinkingBlock{Provider: "openai-responses", ID: "rs_2", Data: "enc-2"},
				&llm.ToolCallBlock{ID: "call_4", Name: "now"},
			}},
			{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: "call_4", Name: "now"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.TextBlock{Text: "It is noon."},
				&llm.ThinkingBlock{Provider: "openai-responses", Text: "trailing, nothing follows", ID: "rs_3", Data: "enc-3"},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Thanks."}}},
		},
	}
}

func TestRequestGolden(t *testing.T) {
	providertest.GoldenRequest(t, dial, fullTranscript())
}

// nextRequest streams the response in file and returns the body of the
// request that would follow it, with that response in its transcript.
func nextRequest(t *testing.T, file string, reasoningModel bool) []byte {
	t.Helper()
	req := simpleRequest()
	req.ReasoningModel = reasoningModel
	run := providertest.Replay(t, dial, req, file)
	req.Messages = append(req.Messages, run.Resp.Message)
	body, err := buildRequest(req, run.Provider.Name())
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestReasoningRoundTrip feeds a streamed response back as the next
// request's transcript: the reasoning item goes back with its id,
// summary and encrypted content, before the output it led to.
func TestReasoningRoundTrip(t *testing.T) {
	var w struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(nextRequest(t, "reasoning_tools.sse", true), &w); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range w.Input {
		types = append(types, it["type"].(string))
	}
	if got := types; len(got) != 5 || got[0] != "message" || got[1] != "reasoning" || got[2] != "message" || got[3] != "function_call" || got[4] != "function_call" {
		t.Fatalf("input item types = %v", got)
	}
	r := w.Input[1]
	summary, _ := json.Marshal(r["summary"])
	if r["id"] != "rs_01" || r["encrypted_content"] != "gAAAAABenc-1" ||
		string(summary) != `[{"text":"**Planning** Need the weather in two cities.\n\nCall the tool twice.","type":"summary_text"}]` {
		t.Fatalf("reasoning item = %v", r)
	}
	if w.Input[3]["call_id"] != "call_paris" || w.Input[3]["arguments"] != `{"city":"Paris"}` {
		t.Fatalf("function call = %v", w.Input[3])
	}
}

// TestRawReasoningRoundTrip sends raw reasoning back as the reasoning
// item's reasoning_text content, never as a summary the model did not
// write.
func TestRawReasoningRoundTrip(t *testing.T) {
	body := nextRequest(t, "reasoning_raw.sse", false)
	var w struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"reasoning","id":"rs_07","summary":[],"content":[{"type":"reasoning_text","text":"The user wants the files. Use ls."}],"encrypted_content":"gAAAAABenc-7"}`
	if len(w.Input) != 3 || string(w.Input[1]) != want {
		t.Fatalf("input = %s", body)
	}
}

func TestRequestParameters(t *testing.T) {
	tests := []struct {
		name           string
		maxTokens      int
		reasoning      string
		reasoningModel bool
		want           string
	}{
		{"defaults", 0, "", false, `{"store":false,"stream":true}`},
		{"max tokens", 100, "", false, `{"max_output_tokens":100,"store":false,"stream":true}`},
		{"reasoning model", 0, "", true, `{"include":["reasoning.encrypted_content"],"reasoning":{"summary":"auto"},"store":false,"stream":true}`},
		{"effort", 100, "low", true, `{"include":["reasoning.encrypted_content"],"max_output_tokens":100,"reasoning":{"effort":"low","summary":"auto"},"store":false,"stream":true}`},
		{"effort asked of an unlisted model", 0, "medium", false, `{"include":["reasoning.encrypted_content"],"reasoning":{"effort":"medium","summary":"auto"},"store":false,"stream":true}`},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.MaxTokens, req.Reasoning, req.ReasoningModel = tt.maxTokens, tt.reasoning, tt.reasoningModel
		body, err := buildRequest(req, "openai-responses")
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		if string(w["input"]) != `[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]` {
			t.Errorf("%s: input = %s", tt.name, w["input"])
		}
		if _, ok := w["tools"]; ok {
			t.Errorf("%s: tools sent though there are none", tt.name)
		}
		if _, ok := w["instructions"]; ok {
			t.Errorf("%s: instructions sent though there is no system prompt", tt.name)
		}
		delete(w, "model")
		delete(w, "input")
		got, _ := json.Marshal(w)
		if string(got) != tt.want {
			t.Errorf("%s: parameters = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestCustomNameKeepsOwnReasoning(t *testing.T) {
	req := simpleRequest()
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.ThinkingBlock{Provider: "openai-responses", ID: "rs_a", Data: "enc-a"},
		&llm.ThinkingBlock{Provider: "azure", ID: "rs_b", Data: "enc-b"},
		&llm.TextBlock{Text: "ok"},
	}})
	body, err := buildRequest(req, "azure")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte("rs_a")) || !bytes.Contains(body, []byte(`"id":"rs_b"`)) {
		t.Fatalf("body = %s", body)
	}
}

func TestRequestCachedMatchesFresh(t *testing.T) {
	const name = "openai-responses"
	fresh := func(req *llm.Request) ([]byte, error) { return buildRequest(req, name) }
	cached := func(req *llm.Request, tools *reqbody.ToolCache, msgs *reqbody.MessageCache) ([]byte, error) {
		return buildRequestCached(req, name, tools, msgs)
	}
	providertest.CachedMatchesFreshWith(t, fullTranscript(), fresh, cached)
}

// TestLongTextSplicedIntoBody: a user message of long text is left out of
// the cache and the body's bytes, and the body read holds exactly the
// input item the message would have had, the same from the cache as
// fresh.
func TestLongTextSplicedIntoBody(t *testing.T) {
	encode := func(m *llm.Message) ([]byte, error) { return reqbody.Fragment(appendMessage(nil, m, "openai")) }
	providertest.LongTextSpliced(t, "gpt-test", "", ",", encode, func() (func(*llm.Request) (*reqbody.Payload, error), func() int) {
		var tools reqbody.ToolCache
		var msgs reqbody.MessageCache
		return func(req *llm.Request) (*reqbody.Payload, error) {
			return buildPayload(req, "openai", &tools, &msgs, nil)
		}, msgs.Reused
	})
}

package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/registry"
)

// seen is a request a loopback server received.
type seen struct {
	Path string
	Body map[string]any
}

// loopback returns HTTP options whose client sends every request, whatever
// its host, to a loopback server that answers with body and records what
// it got; nothing leaves the machine.
func loopback(t *testing.T, body string) (httpcall.Options, *[]seen) {
	t.Helper()
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &b); err != nil {
			t.Errorf("request body is not JSON: %s", data)
		}
		got = append(got, seen{Path: r.URL.Path, Body: b})
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	target, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: rewrite{target: target, next: http.DefaultTransport}}
	return httpcall.Options{HTTPClient: client, MaxAttempts: 1}, &got
}

// lastHost is the host the last request through a rewrite was meant for.
var lastHost string

// rewrite sends every request to target, whatever its scheme and host,
// after noting the host it was meant for.
type rewrite struct {
	target *url.URL
	next   http.RoundTripper
}

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	lastHost = req.URL.Host
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	return r.next.RoundTrip(req)
}

// completed is the shortest Responses stream that ends well.
const completed = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"

// chatDone is the shortest Chat Completions stream that ends well.
const chatDone = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// defaultRequest is what the agent sends for the default openai model with
// zot's tools and --reasoning high.
func defaultRequest(t *testing.T) *llm.Request {
	t.Helper()
	c := models.Builtin()
	id, _ := c.Default("openai")
	req := &llm.Request{
		Model:     id,
		System:    "You are zot.",
		Reasoning: "high",
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "list the files"}}}},
		Tools: []llm.ToolSpec{{Name: "ls", Description: "List a directory.",
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	c.Resolve("openai", id).Describe(req)
	return req
}

// TestDefaultOpenAIModelTakesTools: the default openai model refuses
// function tools with reasoning on Chat Completions, so on OpenAI's own
// endpoint zot asks it on Responses, in the shape of ResponseCreateParams
// of the openai npm package 7.57.0 (src/resources/responses/responses.ts:
// input items, FunctionTool {type:"function", name, description,
// parameters, strict}, Reasoning {effort, summary}, include
// "reasoning.encrypted_content", store, stream).
func TestDefaultOpenAIModelTakesTools(t *testing.T) {
	opt, got := loopback(t, completed)
	p, err := registry.Build(registry.Spec{Name: "openai", APIKey: "test-key", HTTP: opt})
	if err != nil {
		t.Fatal(err)
	}
	req := defaultRequest(t)
	if !req.NoChatToolsReasoning {
		t.Fatalf("the default model %s is not marked as refusing tools with reasoning on Chat Completions", req.Model)
	}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil || resp.Stop != llm.StopEndTurn {
		t.Fatalf("stream: %v %+v", err, resp)
	}
	if len(*got) != 1 || (*got)[0].Path != "/v1/responses" || lastHost != "api.openai.com" {
		t.Fatalf("requests %+v, want one to /v1/responses", *got)
	}
	want := map[string]any{
		"model":        req.Model,
		"instructions": "You are zot.",
		"reasoning":    map[string]any{"effort": "high", "summary": "auto"},
		"include":      []any{"reasoning.encrypted_content"},
		"store":        false,
		"stream":       true,
		"input": []any{map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "list the files"}}}},
		"tools": []any{map[string]any{"type": "function", "name": "ls", "description": "List a directory.", "strict": false,
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}},
	}
	if !reflect.DeepEqual((*got)[0].Body, want) {
		t.Fatalf("body\n got %v\nwant %v", (*got)[0].Body, want)
	}
}

// TestDefaultOpenAIModelOnCustomBaseURL: with --base-url (a proxy, a
// compatible server) the default model still gets the endpoint that takes
// its tools with reasoning: the Responses API under that base URL. Chat
// Completions would need reasoning_effort "none", which GPT-6.1 Sol
// refuses (OpenAI's deployment checklist).
func TestDefaultOpenAIModelOnCustomBaseURL(t *testing.T) {
	opt, got := loopback(t, completed)
	p, err := registry.Build(registry.Spec{Name: "openai", APIKey: "test-key", BaseURL: "http://openai-proxy.invalid/v1", HTTP: opt})
	if err != nil {
		t.Fatal(err)
	}
	req := defaultRequest(t)
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 || (*got)[0].Path != "/v1/responses" || lastHost != "openai-proxy.invalid" {
		t.Fatalf("requests %+v to %s, want one to the proxy's /v1/responses", *got, lastHost)
	}
	b := (*got)[0].Body
	if !reflect.DeepEqual(b["reasoning"], map[string]any{"effort": "high", "summary": "auto"}) || b["model"] != req.Model {
		t.Fatalf("body %v", b)
	}
	tools, _ := b["tools"].([]any)
	if len(tools) != 1 || !reflect.DeepEqual(tools[0].(map[string]any)["type"], "function") {
		t.Fatalf("tools %v", b["tools"])
	}
}

// TestUnknownGPTGoesToResponses: an id the catalog does not know gets the
// endpoint its family needs: gpt-5.6 and later with tools and reasoning
// go to Responses with the effort asked for, never to Chat Completions
// with the effort dropped.
func TestUnknownGPTGoesToResponses(t *testing.T) {
	opt, got := loopback(t, completed)
	p, err := registry.Build(registry.Spec{Name: "openai", APIKey: "test-key", HTTP: opt})
	if err != nil {
		t.Fatal(err)
	}
	req := defaultRequest(t)
	req.Model = "gpt-6.9-nova"
	req.NoChatToolsReasoning, req.ReasoningModel = false, false
	models.Builtin().Resolve("openai", req.Model).Describe(req)
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 || (*got)[0].Path != "/v1/responses" {
		t.Fatalf("requests %+v, want one to /v1/responses", *got)
	}
	if r, _ := (*got)[0].Body["reasoning"].(map[string]any); r["effort"] != "high" {
		t.Fatalf("body %v", (*got)[0].Body)
	}
}

// TestCompatibleProviders: ollama and kimi are OpenAI-compatible
// providers with their default API roots (as upstream zot has them), and a
// --base-url replaces the root.
func TestCompatibleProviders(t *testing.T) {
	for _, tc := range []struct {
		name, base, host, path string
	}{
		{"ollama", "", "localhost:11434", "/v1/chat/completions"},
		{"kimi", "", "api.kimi.com", "/coding/v1/chat/completions"},
		{"moonshot", "", "api.kimi.com", "/coding/v1/chat/completions"},
		{"ollama", "http://gpu-box.invalid:8080/v1", "gpu-box.invalid:8080", "/v1/chat/completions"},
	} {
		opt, got := loopback(t, chatDone)
		p, err := registry.Build(registry.Spec{Name: tc.name, BaseURL: tc.base, HTTP: opt})
		if err != nil {
			t.Fatal(err)
		}
		req := &llm.Request{Model: "qwen3-coder", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}}
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(*got) != 1 || (*got)[0].Path != tc.path || lastHost != tc.host {
			t.Errorf("%s %q: requests %+v to %s, want %s%s", tc.name, tc.base, *got, lastHost, tc.host, tc.path)
		}
	}
	if registry.NeedsKey("ollama", "") || !registry.NeedsKey("kimi", "") {
		t.Error("ollama needs no key, kimi needs one")
	}
	if p, _ := registry.Find("kimi"); !reflect.DeepEqual(p.KeyVars, []string{"KIMI_API_KEY", "MOONSHOT_API_KEY"}) {
		t.Errorf("kimi key variables %v", p.KeyVars)
	}
}

// TestUnknownProviderPointsAtCompatibleRoute: a provider zot does not know
// is refused with the list, and the way to reach any other
// OpenAI-compatible server.
func TestUnknownProviderPointsAtCompatibleRoute(t *testing.T) {
	_, err := registry.Build(registry.Spec{Name: "vllm"})
	if err == nil || !strings.Contains(err.Error(), "ollama") || !strings.Contains(err.Error(), "--provider openai --base-url") {
		t.Fatalf("error %v", err)
	}
}

// TestDeepSeekEndpoint: the deepseek provider posts to DeepSeek's OpenAI
// format root with the DeepSeek model the catalog defaults to.
func TestDeepSeekEndpoint(t *testing.T) {
	opt, got := loopback(t, chatDone)
	p, err := registry.Build(registry.Spec{Name: "deepseek", APIKey: "k", HTTP: opt})
	if err != nil {
		t.Fatal(err)
	}
	id, ok := models.Builtin().Default("deepseek")
	req := &llm.Request{Model: id, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}}
	if _, err := p.Stream(context.Background(), req, nil); err != nil || !ok {
		t.Fatal(err)
	}
	if (*got)[0].Path != "/chat/completions" || (*got)[0].Body["model"] != "deepseek-flash" || !strings.HasPrefix(lastHost, "api.deepseek.com") {
		t.Fatalf("request %+v to %s", (*got)[0], lastHost)
	}
}

// TestOtherOpenAIModelsStayOnChat: on OpenAI's own endpoint only the
// models that refuse tools with reasoning on Chat Completions are asked on
// Responses; a model that takes them (gpt-5) stays on Chat Completions.
func TestOtherOpenAIModelsStayOnChat(t *testing.T) {
	opt, got := loopback(t, chatDone)
	p, err := registry.Build(registry.Spec{Name: "openai", APIKey: "test-key", HTTP: opt})
	if err != nil {
		t.Fatal(err)
	}
	req := defaultRequest(t)
	req.Model = "gpt-5"
	req.NoChatToolsReasoning = false
	models.Builtin().Resolve("openai", req.Model).Describe(req)
	if req.NoChatToolsReasoning || !req.ReasoningModel {
		t.Fatalf("gpt-5 is no longer a reasoning model that takes tools on Chat Completions: %+v", req)
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 || (*got)[0].Path != "/v1/chat/completions" || (*got)[0].Body["reasoning_effort"] != "high" {
		t.Fatalf("requests %+v, want one to /v1/chat/completions with the effort asked for", *got)
	}
}

// anthropicDone is the shortest Messages stream that ends well
// (RawMessageStreamEvent of @anthropic-ai/sdk 1.14.0).
const anthropicDone = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// geminiDone is the shortest streamGenerateContent answer that ends well.
const geminiDone = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}]}\n\n"

// TestReasoningPerFamily: the request fields each family's reasoning
// levels become, through the catalog (and its family rules for the ids it
// does not hold) as the agent describes a request, captured at a loopback
// server. Shapes: ThinkingConfigEnabled / Adaptive / Disabled and
// OutputConfig.effort of @anthropic-ai/sdk 1.14.0
// (resources/messages/messages.d.ts), ReasoningEffort of openai 7.57.0
// (resources/shared.d.ts), ThinkingConfig {thinkingBudget, thinkingLevel:
// ThinkingLevel} of @google/genai 3.3.0 (dist/genai.d.ts).
func TestReasoningPerFamily(t *testing.T) {
	tests := []struct {
		provider, model, level string
		stream                 string
		field                  string // the member of the body checked
		want                   string // its JSON
		maxTokens              string // max_tokens, for Anthropic
	}{
		// Claude 4.5 (in the catalog now) and an older 4.x id it does not
		// hold: a budget, never adaptive thinking.
		{"anthropic", "claude-opus-4-5", "high", anthropicDone, "thinking", `{"budget_tokens":24576,"type":"enabled"}`, "64000"},
		{"anthropic", "claude-opus-4-1", "low", anthropicDone, "thinking", `{"budget_tokens":2048,"type":"enabled"}`, "64000"},
		// Claude 5.x: adaptive with the effort, xhigh and max included.
		{"anthropic", "claude-opus-5-5", "max", anthropicDone, "output_config", `{"effort":"max"}`, "64000"},
		{"anthropic", "claude-sonnet-5-7", "xhigh", anthropicDone, "output_config", `{"effort":"xhigh"}`, "64000"},
		// Sonnet 5.5 thinks by default with its thinking hidden: without a
		// level its thinking is asked for and gets the thinking cap; none
		// turns it off.
		{"anthropic", "claude-sonnet-5-5", "", anthropicDone, "thinking", `{"display":"summarized","type":"adaptive"}`, "64000"},
		{"anthropic", "claude-sonnet-5-5", "none", anthropicDone, "thinking", `{"type":"disabled"}`, "32000"},
		// OpenAI: the level as reasoning.effort on Responses (GPT-5.6 and
		// later with tools), as reasoning_effort on Chat Completions.
		{"openai", "gpt-5.6-sol", "max", completed, "reasoning", `{"effort":"max","summary":"auto"}`, ""},
		{"openai", "gpt-5.1", "none", chatDone, "reasoning_effort", `"none"`, ""},
		{"openai", "gpt-5", "minimal", chatDone, "reasoning_effort", `"minimal"`, ""},
		// Gemini 3 and later: thinkingLevel; 2.x: a budget, 0 for none.
		{"gemini", "gemini-4-neon", "xhigh", geminiDone, "generationConfig", `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"XHIGH"}}`, ""},
		{"gemini", "gemini-3.8-flash", "minimal", geminiDone, "generationConfig", `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"MINIMAL"}}`, ""},
		{"gemini", "gemini-2.5-flash", "none", geminiDone, "generationConfig", `{"thinkingConfig":{"includeThoughts":false,"thinkingBudget":0}}`, ""},
		{"gemini", "gemini-2.5-flash", "medium", geminiDone, "generationConfig", `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}`, ""},
	}
	for _, tc := range tests {
		m := models.Builtin().Resolve(tc.provider, tc.model)
		if err := m.TakesEffort(tc.level); err != nil {
			t.Errorf("%s %s: %v", tc.model, tc.level, err)
			continue
		}
		opt, got := loopback(t, tc.stream)
		p, err := registry.Build(registry.Spec{Name: tc.provider, APIKey: "k", HTTP: opt})
		if err != nil {
			t.Fatal(err)
		}
		req := defaultRequest(t)
		req.Model, req.Reasoning = tc.model, tc.level
		req.NoChatToolsReasoning = false
		m.Describe(req)
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Errorf("%s %s: %v", tc.model, tc.level, err)
			continue
		}
		b := (*got)[0].Body
		field, _ := json.Marshal(b[tc.field])
		if string(field) != tc.want {
			t.Errorf("%s %q: %s = %s, want %s", tc.model, tc.level, tc.field, field, tc.want)
		}
		if tc.maxTokens != "" {
			if mt, _ := json.Marshal(b["max_tokens"]); string(mt) != tc.maxTokens {
				t.Errorf("%s %q: max_tokens %s, want %s", tc.model, tc.level, mt, tc.maxTokens)
			}
		}
	}
	// Levels a model does not take are refused with the ones it does.
	for _, tc := range []struct{ provider, model, level, list string }{
		{"openai", "gpt-6.1-sol", "none", "low, medium, high, xhigh, max"},
		{"anthropic", "claude-opus-4-5", "max", "none, low, medium, high"},
		{"anthropic", "claude-fable-5-2", "none", "low, medium, high, xhigh, max"},
		{"gemini", "gemini-4-argon", "minimal", "low, medium, high, xhigh"},
	} {
		err := models.Builtin().Resolve(tc.provider, tc.model).TakesEffort(tc.level)
		if err == nil || !strings.Contains(err.Error(), "("+"it takes "+tc.list+")") {
			t.Errorf("%s %s: %v", tc.model, tc.level, err)
		}
	}
}

package anthropic

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/reqbody"
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
		// Claude 5: adaptive thinking.
		ReasoningControl: llm.ReasoningEffort, MaxOutput: 128_000,
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

// TestRequestParameters pins max_tokens, thinking and output_config for
// each kind of model. The shapes are those of @anthropic-ai/sdk 1.12.0
// (src/resources/messages/messages.ts): ThinkingConfigEnabled
// {type:"enabled", budget_tokens} ("Must be ≥1024 and less than
// max_tokens"), ThinkingConfigAdaptive {type:"adaptive", display}
// (display "summarized" | "omitted"; "The default depends on the model"),
// and OutputConfig {effort: "low" | "medium" | "high" | "xhigh" | "max"}.
func TestRequestParameters(t *testing.T) {
	tests := []struct {
		name      string
		control   llm.ReasoningControl
		always    bool
		maxOutput int
		maxTokens int
		reasoning string
		want      string
	}{
		{"unknown limit", "", false, 0, 0, "", `{"max_tokens":8192}`},
		{"explicit max", llm.ReasoningEffort, false, 128_000, 1000, "", `{"max_tokens":1000}`},
		{"limit under the cap", llm.ReasoningBudget, false, 16_000, 0, "", `{"max_tokens":16000}`},
		{"capped", llm.ReasoningEffort, false, 128_000, 0, "", `{"max_tokens":32000}`},
		// Claude 5 (and ids the catalog does not know): adaptive thinking,
		// the effort in output_config, summarized display.
		{"adaptive", llm.ReasoningEffort, false, 128_000, 0, "medium",
			`{"max_tokens":64000,"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"medium"}}`},
		{"adaptive, unknown id", "", false, 8192, 0, "low",
			`{"max_tokens":8192,"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"low"}}`},
		// A model that always thinks: adaptive on every call, and room for
		// the thinking in max_tokens.
		{"always thinks", llm.ReasoningEffort, true, 128_000, 0, "",
			`{"max_tokens":64000,"thinking":{"type":"adaptive","display":"summarized"}}`},
		{"always thinks, effort", llm.ReasoningEffort, true, 128_000, 0, "high",
			`{"max_tokens":64000,"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"high"}}`},
		// Haiku 4.5: a budget, below max_tokens.
		{"budget", llm.ReasoningBudget, false, 64_000, 0, "low",
			`{"max_tokens":64000,"thinking":{"type":"enabled","budget_tokens":2048}}`},
		{"budget raises max", llm.ReasoningBudget, false, 64_000, 16000, "high",
			`{"max_tokens":32768,"thinking":{"type":"enabled","budget_tokens":24576}}`},
		{"budget, unknown limit", llm.ReasoningBudget, false, 0, 0, "medium",
			`{"max_tokens":16384,"thinking":{"type":"enabled","budget_tokens":8192}}`},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.ReasoningControl, req.AlwaysReasons, req.MaxOutput = tt.control, tt.always, tt.maxOutput
		req.MaxTokens, req.Reasoning = tt.maxTokens, tt.reasoning
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		if string(w["stream"]) != "true" || w["system"] != nil || w["tools"] != nil {
			t.Errorf("%s: body %s", tt.name, body)
		}
		for _, k := range []string{"model", "messages", "stream"} {
			delete(w, k)
		}
		var got strings.Builder
		got.WriteString("{")
		for _, k := range []string{"max_tokens", "thinking", "output_config"} {
			if v, ok := w[k]; ok {
				if got.Len() > 1 {
					got.WriteString(",")
				}
				got.WriteString(strconv.Quote(k) + ":" + string(v))
				delete(w, k)
			}
		}
		got.WriteString("}")
		if got.String() != tt.want || len(w) != 0 {
			t.Errorf("%s: parameters %s (left %v), want %s", tt.name, got.String(), w, tt.want)
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

// TestLongTextEncodedInPlace: a message of long text is kept out of the
// cache and out of the body's bytes; reading the payload gives the same
// bytes as a fresh request, which read back as the same blocks (with the
// cache breakpoint on the last) as a short message would; a request that
// reuses the cache is the same again.
func TestLongTextEncodedInPlace(t *testing.T) {
	long := providertest.LongText()
	req := &llm.Request{Model: "claude-test", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "first"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "ok"}}},
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: long}, &llm.TextBlock{}, &llm.TextBlock{Text: "tail"}}},
	}}
	var tools reqbody.ToolCache
	var msgs reqbody.MessageCache
	for round := range 2 {
		p, _, err := buildPayload(req, caches{tools: &tools, msgs: &msgs})
		if err != nil {
			t.Fatal(err)
		}
		sent, err := io.ReadAll(p.Reader())
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(sent)) != p.Len() {
			t.Errorf("round %d: %d bytes read, Len says %d", round, len(sent), p.Len())
		}
		fresh, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if string(sent) != string(fresh) {
			t.Fatalf("round %d: the payload read differs from a fresh request", round)
		}
		var got struct {
			Messages []struct {
				Role    string
				Content []struct {
					Type, Text   string
					CacheControl *struct{ Type string } `json:"cache_control"`
				}
			}
		}
		if err := json.Unmarshal(sent, &got); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		last := got.Messages[len(got.Messages)-1].Content
		if len(got.Messages) != 3 || len(last) != 2 || last[0].Text != long || last[1].Text != "tail" ||
			last[0].CacheControl != nil || last[1].CacheControl == nil || last[1].CacheControl.Type != "ephemeral" {
			t.Fatalf("round %d: the long message reads back wrong: %d messages, last has %d blocks", round, len(got.Messages), len(last))
		}
	}
	if n := msgs.Reused(); n != 3 {
		t.Errorf("second request reused %d encodings, want 3 (the long one's stand-in too)", n)
	}
}

// TestThinkingIdleTimeout: a call that may think (a reasoning model, a
// model that thinks by default, a level asked for) allows 10 minutes
// without a byte, as the other providers do; one that does not, and
// "none", keep the default; a timeout the options set is kept.
func TestThinkingIdleTimeout(t *testing.T) {
	p := New(Config{})
	for _, tc := range []struct {
		name string
		req  llm.Request
		want time.Duration
	}{
		{"reasoning model", llm.Request{ReasoningModel: true}, 10 * time.Minute},
		{"thinks by default", llm.Request{ThinksByDefault: true}, 10 * time.Minute},
		{"a level", llm.Request{Reasoning: "low"}, 10 * time.Minute},
		{"none", llm.Request{Reasoning: "none"}, 0},
		{"plain", llm.Request{}, 0},
	} {
		if got := p.opt.Once(idleTimeout(&tc.req)).IdleTimeout; got != tc.want {
			t.Errorf("%s: idle timeout %v, want %v", tc.name, got, tc.want)
		}
	}
	set := New(Config{Options: httpcall.Options{IdleTimeout: time.Second}})
	if got := set.opt.Once(idleTimeout(&llm.Request{ReasoningModel: true})).IdleTimeout; got != time.Second {
		t.Errorf("a set timeout became %v", got)
	}
}

// TestLevelsNotTaken: a level the request's kind of thinking has no field
// for is refused before anything is sent (the catalog refuses it earlier;
// this is the provider's own guard).
func TestLevelsNotTaken(t *testing.T) {
	for _, tc := range []struct {
		req  llm.Request
		want string
	}{
		{llm.Request{Model: "claude-fable-5-2", AlwaysReasons: true, Reasoning: "none"}, "always thinks"},
		{llm.Request{ReasoningControl: llm.ReasoningBudget, Reasoning: "max"}, "for a thinking budget"},
		{llm.Request{ReasoningControl: llm.ReasoningEffort, Reasoning: "minimal"}, "want none, low, medium, high, xhigh or max"},
	} {
		var w wireRequest
		if err := setThinking(&w, &tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc.req, err)
		}
	}
}

// TestHeadCachedMatchesFresh: one head cache across requests whose model,
// reasoning, output limit and system prompt change gives each request the
// body a fresh encoding gives it.
func TestHeadCachedMatchesFresh(t *testing.T) {
	var heads headCache
	var tools reqbody.ToolCache
	var msgs reqbody.MessageCache
	base := fullTranscript()
	steps := []func(r *llm.Request){
		func(*llm.Request) {},
		func(*llm.Request) {},
		func(r *llm.Request) { r.System = "You are zot, in another folder." },
		func(r *llm.Request) { r.Reasoning = "low" },
		func(r *llm.Request) { r.Reasoning = "none" },
		func(r *llm.Request) { r.ReasoningControl, r.Reasoning = llm.ReasoningBudget, "medium" },
		func(r *llm.Request) { r.MaxTokens = 1234 },
		func(r *llm.Request) { r.Model = "claude-other" },
		func(r *llm.Request) { r.System = "" },
		func(*llm.Request) {},
	}
	req := *base
	for i, change := range steps {
		change(&req)
		p, _, err := buildPayload(&req, caches{head: &heads, tools: &tools, msgs: &msgs})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		fresh, err := buildRequest(&req)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := p.Bytes(); string(got) != string(fresh) {
			t.Fatalf("step %d: body with the head cache differs:\n%s\nfresh:\n%s", i, got, fresh)
		}
	}
}

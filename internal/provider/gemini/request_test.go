package gemini

import (
	"bytes"
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/reqbody"
)

// fullTranscript is a tool loop with every kind of block: Gemini's own
// thoughts and signatures (which go back), other providers' thinking
// (dropped), calls with ids zot made up (sent without them), a call from
// another provider (given the skip signature), and images in prompts and
// tool results.
func fullTranscript() *llm.Request {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	jpeg := []byte{0xff, 0xd8, 0xff, 9}
	return &llm.Request{
		Model:     "gemini-test",
		System:    "You are zot.",
		Reasoning: "high",
		MaxTokens: 4096,
		Tools: []llm.ToolSpec{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"path":{"type":"string","description":"File path."},"limit":{"type":["integer","null"],"minimum":1}},"required":["path"],"additionalProperties":false}`)},
			{Name: "now", Description: "Current time."},
			{Name: "empty", Description: "No arguments.", Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Look at this."}, &llm.ImageBlock{MIME: "image/png", Data: png}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.ThinkingBlock{Provider: "gemini", Text: "Reading the file.", Signature: "dGhvdWdodA=="},
				&llm.ThinkingBlock{Provider: "anthropic", Text: "foreign", Signature: "sig"},
				&llm.TextBlock{Text: ""},
				&llm.TextBlock{Text: "I'll read it."},
				&llm.ThinkingBlock{Provider: "gemini", Signature: "dGV4dA=="},
				&llm.ToolCallBlock{ID: "gemini-call-r1-0", Name: "read", Args: json.RawMessage(`{"path":"a.go"}`), Signature: "Y2FsbA=="},
				&llm.ToolCallBlock{ID: "fc-2", Name: "now", Args: json.RawMessage(`{}`), ArgsError: "not JSON"},
				&llm.ToolCallBlock{ID: "gemini-call-r1-2", Name: "read", Args: json.RawMessage(`{"path":"logo.png"}`)},
			}},
			{Role: llm.RoleTool, Content: []llm.Block{
				&llm.ToolResultBlock{CallID: "gemini-call-r1-0", Name: "read", Content: []llm.Block{&llm.TextBlock{Text: "package a"}, &llm.ImageBlock{MIME: "image/jpeg", Data: jpeg}}},
				&llm.ToolResultBlock{CallID: "fc-2", Name: "now", IsError: true, Content: []llm.Block{&llm.TextBlock{Text: "invalid arguments"}}},
				&llm.ToolResultBlock{CallID: "gemini-call-r1-2", Content: []llm.Block{&llm.ImageBlock{MIME: "image/png", Data: png}}},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolCallBlock{ID: "toolu_9", Name: "now"}}},
			{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: "toolu_9", Name: "now"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.TextBlock{Text: "It is noon."},
				&llm.ThinkingBlock{Provider: "gemini", Signature: "bm9vbg=="},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ThinkingBlock{Provider: "openai-responses", Text: "only foreign", ID: "rs_1", Data: "enc"}}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Thanks."}}},
		},
	}
}

func TestRequestGolden(t *testing.T) {
	providertest.GoldenRequest(t, dial, fullTranscript())
}

// TestSignatureRoundTrip feeds streamed responses back as the next
// request's transcript: thought, call and text signatures return on the
// parts they came on.
func TestSignatureRoundTrip(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"gemini3_tools.sse", `{"role":"model","parts":[` +
			`{"text":"Thinking about files.","thought":true,"thoughtSignature":"dGhvdWdodC1zaWc="},` +
			`{"functionCall":{"id":"fc-1","name":"ls","args":{"path":"."}},"thoughtSignature":"Y2FsbC1zaWc="},` +
			`{"functionCall":{"id":"fc-2","name":"now","args":{}}}]}`},
		{"thinking_tools.sse", `{"role":"model","parts":[` +
			`{"text":"**Planning** Need the weather in two cities.","thought":true},` +
			`{"text":"Checking both."},` +
			`{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2lnLXBhcmlz"},` +
			`{"functionCall":{"name":"get_weather","args":{"city":"Rome"}}}]}`},
		{"text_signature.sse", `{"role":"model","parts":[{"text":"The answer is 42.","thoughtSignature":"dGV4dC1zaWc="}]}`},
	} {
		req := simpleRequest()
		req.Messages = append(req.Messages, providertest.Replay(t, dial, req, tt.file).Resp.Message)
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Contents []json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		if len(w.Contents) != 2 || string(w.Contents[1]) != tt.want {
			t.Errorf("%s: contents = %s", tt.file, body)
		}
	}
}

func TestSkipSignatureOnlyForModelsThatValidate(t *testing.T) {
	for _, tt := range []struct {
		model string
		skip  bool
	}{
		{"gemini-3.8-flash", true},
		{"models/gemini-3.1-pro-preview", true},
		{"gemini-2.5-flash", false},
		{"models/gemini-2.5-pro", false},
		{"gemini-1.5-pro", false},
	} {
		req := simpleRequest()
		req.Model = tt.model
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			&llm.ToolCallBlock{ID: "call_1", Name: "ls", Args: json.RawMessage(`{}`)},
			&llm.ToolCallBlock{ID: "call_2", Name: "ls", Args: json.RawMessage(`{}`)},
		}})
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(body, []byte(skipSignature)); got != map[bool]int{true: 1, false: 0}[tt.skip] {
			t.Errorf("%s: skip signature sent %d times: %s", tt.model, got, body)
		}
	}
}

// TestRequestParameters pins generationConfig. ThinkingConfig is that of
// @google/genai 3.1.0 (dist/genai.d.ts): includeThoughts, thinkingBudget
// (2.x) and thinkingLevel, an enum MINIMAL | LOW | MEDIUM | HIGH (Gemini 3
// and later, which refuse a budget).
func TestRequestParameters(t *testing.T) {
	tests := []struct {
		name           string
		model          string
		control        llm.ReasoningControl
		maxTokens      int
		reasoning      string
		reasoningModel bool
		want           string
	}{
		{"defaults", "gemini-test", "", 0, "", false, `null`},
		{"max tokens", "gemini-test", "", 100, "", false, `{"maxOutputTokens":100}`},
		{"thinking model", "gemini-test", "", 0, "", true, `{"thinkingConfig":{"includeThoughts":true}}`},
		{"budget low", "gemini-2.5-flash", llm.ReasoningBudget, 0, "low", false, `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}`},
		{"budget raises max", "gemini-2.5-flash", llm.ReasoningBudget, 1000, "medium", true, `{"maxOutputTokens":16384,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}`},
		{"budget fits", "gemini-2.5-pro", llm.ReasoningBudget, 64000, "high", true, `{"maxOutputTokens":64000,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":24576}}`},
		{"level low", "gemini-3.8-flash", llm.ReasoningEffort, 0, "low", true, `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"LOW"}}`},
		{"level keeps max", "gemini-4-argon", llm.ReasoningEffort, 1000, "medium", true, `{"maxOutputTokens":1000,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"MEDIUM"}}`},
		{"level high", "gemini-3.8-flash", llm.ReasoningEffort, 0, "high", true, `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}`},
		// Ids the catalog does not place: by version.
		{"unplaced 3.x", "gemini-3.9-flash", "", 0, "high", true, `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}`},
		{"unplaced 2.x", "gemini-2.6-flash", "", 0, "high", true, `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":24576}}`},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.Model, req.ReasoningControl = tt.model, tt.control
		req.MaxTokens, req.Reasoning, req.ReasoningModel = tt.maxTokens, tt.reasoning, tt.reasoningModel
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		if string(w["contents"]) != `[{"role":"user","parts":[{"text":"hi"}]}]` {
			t.Errorf("%s: contents = %s", tt.name, w["contents"])
		}
		if _, ok := w["tools"]; ok {
			t.Errorf("%s: tools sent though there are none", tt.name)
		}
		if _, ok := w["systemInstruction"]; ok {
			t.Errorf("%s: systemInstruction sent though there is no system prompt", tt.name)
		}
		got := string(w["generationConfig"])
		if got == "" {
			got = "null"
		}
		if got != tt.want {
			t.Errorf("%s: generationConfig = %s, want %s", tt.name, got, tt.want)
		}
	}
	req := simpleRequest()
	req.Reasoning = "extreme"
	if _, err := buildRequest(req); err == nil {
		t.Error("unknown reasoning effort accepted")
	}
	req = simpleRequest()
	req.Tools = []llm.ToolSpec{{Name: "bad", Schema: json.RawMessage(`{"type":`)}}
	if _, err := buildRequest(req); err == nil {
		t.Error("invalid tool schema accepted")
	}
}

func TestRequestCachedMatchesFresh(t *testing.T) {
	var tools reqbody.ToolCache
	var msgs messageCaches
	build := func(req *llm.Request, cached bool) ([]byte, error) {
		if !cached {
			return buildRequest(req)
		}
		return buildRequestCached(req, &tools, &msgs)
	}
	reused := func(req *llm.Request) int {
		if gemini3(req.Model) {
			return msgs[1].Reused()
		}
		return msgs[0].Reused()
	}
	providertest.CachedMatchesFresh(t, fullTranscript(), build, reused)
	// A model that validates signatures and one that does not, in turn,
	// share no encoding of a model message.
	for _, model := range []string{"gemini-2.5-pro", "gemini-3-pro", "gemini-2.5-pro"} {
		req := fullTranscript()
		req.Model = model
		providertest.CachedMatchesFresh(t, req, build, reused)
	}
}

// TestResultNameFromCall sends a result without a tool name (as a
// transcript given over the wire has) under the name of its call.
func TestResultNameFromCall(t *testing.T) {
	req := &llm.Request{Model: "gemini-2.5-pro", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "time?"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolCallBlock{ID: "c1", Name: "now", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: "c1", Content: []llm.Block{&llm.TextBlock{Text: "noon"}}}}},
	}}
	body, err := buildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`"functionResponse":{"id":"c1","name":"now"`)) {
		t.Errorf("result not named after its call: %s", body)
	}
	if r := req.Messages[2].Content[0].(*llm.ToolResultBlock); r.Name != "" {
		t.Errorf("the transcript was changed: result name %q", r.Name)
	}
}

// TestToolResultImages checks where the images of a tool result go:
// inside its function response for Gemini 3 and later, after the
// responses, introduced by their call, for 2.x.
func TestToolResultImages(t *testing.T) {
	result := func(model string) []json.RawMessage {
		req := &llm.Request{Model: model, Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "look"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolCallBlock{ID: "c1", Name: "read", Args: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: "c1", Name: "read", Content: []llm.Block{
				&llm.ImageBlock{MIME: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			}}}},
		}}
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Contents []struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		return w.Contents[2].Parts
	}
	got := result("gemini-3.8-flash")
	want := `{"functionResponse":{"id":"c1","name":"read","response":{"output":"(the result is the attached image)"},"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}}]}}`
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("gemini 3 parts:\n%s\nwant\n%s", got, want)
	}
	got = result("gemini-2.5-pro")
	wantOld := []string{
		`{"functionResponse":{"id":"c1","name":"read","response":{"output":"(the result is the image that follows)"}}}`,
		`{"text":"Image output of tool call c1 (read):"}`,
		`{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}}`,
	}
	if len(got) != len(wantOld) {
		t.Fatalf("gemini 2.5 parts: %s", got)
	}
	for i := range got {
		if string(got[i]) != wantOld[i] {
			t.Errorf("gemini 2.5 part %d: %s, want %s", i, got[i], wantOld[i])
		}
	}
}

// TestLongTextSplicedIntoBody: a user message of long text is left out of
// the cache and the body's bytes, and the body read holds exactly the
// parts the message would have had, the same from the cache as fresh.
func TestLongTextSplicedIntoBody(t *testing.T) {
	encode := func(m *llm.Message) ([]byte, error) { return reqbody.Fragment(userParts(m.Content, true)) }
	providertest.LongTextSpliced(t, "gemini-test", "", `{"role":"user","parts":[`, encode, func() (func(*llm.Request) (*reqbody.Payload, error), func() int) {
		var tools reqbody.ToolCache
		var msgs messageCaches
		return func(req *llm.Request) (*reqbody.Payload, error) { return buildPayload(req, &tools, &msgs, nil) }, nil
	})
}

package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 92)...)

func TestPromptWithImages(t *testing.T) {
	var seen *llm.Request
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		seen = req
		return answer(sink, "a picture", llm.Usage{}), nil
	})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	images := []llm.ImageBlock{
		{MIME: "image/png", Data: pngBytes},
		{MIME: "image/gif", Data: append([]byte("\xff\xd8\xff"), make([]byte, 7)...)}, // declared wrong, sniffed jpeg
	}
	if err := a.Prompt(context.Background(), "what is this?", images, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	um := eventsOf[*wire.UserMessageEvent](rec)[0]
	got := string(um.Content.AppendJSON(nil))
	want := `[{"type":"text","text":"what is this?"},{"type":"image","mime_type":"image/png","bytes":100},{"type":"image","mime_type":"image/jpeg","bytes":10}]`
	if got != want {
		t.Errorf("user_message content =\n%s\nwant\n%s", got, want)
	}
	if len(seen.Messages[0].Content) != 3 {
		t.Fatalf("request content = %d blocks", len(seen.Messages[0].Content))
	}
	if img := seen.Messages[0].Content[1].(*llm.ImageBlock); len(img.Data) != 100 {
		t.Errorf("the provider got %d image bytes", len(img.Data))
	}
	// An image-only prompt is allowed.
	if err := a.Prompt(context.Background(), "", images[:1], nil); err != nil {
		t.Errorf("image-only prompt: %v", err)
	}
}

func TestMessages(t *testing.T) {
	a := newAgent(t, scripted.New(scripted.Config{}), nil)
	msgs := []llm.Message{
		{Role: llm.RoleUser, Time: time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.FixedZone("X", -7200)),
			Content: []llm.Block{&llm.TextBlock{Text: "hi"}, &llm.ImageBlock{MIME: "image/webp", Data: []byte("not really an image")}}},
		{Role: llm.RoleAssistant, Meta: map[string]string{metaRawArgs + "c2": "{bad"},
			Content: []llm.Block{
				&llm.ThinkingBlock{Text: "hidden", Signature: "sig"},
				&llm.TextBlock{Text: "calling"},
				&llm.ToolCallBlock{ID: "c1", Name: "read", Args: json.RawMessage("{\n  \"path\": \"a\"\n}")},
				&llm.ToolCallBlock{ID: "c2", Name: "read", Args: json.RawMessage("{}"), ArgsError: "tool arguments are not valid JSON"},
				&llm.ToolCallBlock{ID: "c3", Name: "ls", Args: json.RawMessage("{}"), ArgsError: "not an object: 1"},
			}},
		{Role: llm.RoleTool, Content: []llm.Block{
			&llm.ToolResultBlock{CallID: "c1", Content: []llm.Block{&llm.TextBlock{Text: "x"}, &llm.ImageBlock{MIME: "image/png", Data: pngBytes}}},
			&llm.ToolResultBlock{CallID: "c2", IsError: true, Content: []llm.Block{&llm.TextBlock{Text: "bad"}}},
			&llm.ToolResultBlock{CallID: "c3", IsError: true},
		}},
	}
	if err := a.SetTranscript(msgs); err != nil {
		t.Fatalf("SetTranscript: %v", err)
	}
	got := a.Messages()
	var lines []string
	for _, m := range got {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	want := []string{
		`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","mime_type":"image/webp","bytes":19}],"time":"2026-01-02T05:04:05.678Z"}`,
		`{"role":"assistant","content":[{"type":"text","text":"calling"},{"type":"tool_call","id":"c1","name":"read","args":{"path":"a"}},{"type":"tool_call","id":"c2","name":"read","args":"{bad"},{"type":"tool_call","id":"c3","name":"ls","args":"not an object: 1"}],"time":"2026-11-23T10:00:01.000Z"}`,
		`{"role":"tool","content":[{"type":"tool_result","call_id":"c1","is_error":false,"content":[{"type":"text","text":"x"},{"type":"image","mime_type":"image/png","bytes":100}]},{"type":"tool_result","call_id":"c2","is_error":true,"content":[{"type":"text","text":"bad"}]},{"type":"tool_result","call_id":"c3","is_error":true,"content":[]}],"time":"2026-11-23T10:00:01.000Z"}`,
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("message %d =\n%s\nwant\n%s", i, lines[i], want[i])
		}
	}
	// Transcript is a copy.
	tr := a.Transcript()
	tr[0] = llm.Message{}
	if a.Transcript()[0].Role != llm.RoleUser {
		t.Error("Transcript shares its slice with the agent")
	}
}

func TestValidate(t *testing.T) {
	u := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "u"}}}
	call := func(ids ...string) llm.Message {
		m := llm.Message{Role: llm.RoleAssistant}
		for _, id := range ids {
			m.Content = append(m.Content, &llm.ToolCallBlock{ID: id, Name: "ls"})
		}
		return m
	}
	res := func(ids ...string) llm.Message {
		m := llm.Message{Role: llm.RoleTool}
		for _, id := range ids {
			m.Content = append(m.Content, &llm.ToolResultBlock{CallID: id})
		}
		return m
	}
	for _, c := range []struct {
		name string
		msgs []llm.Message
		want string
	}{
		{"ok", []llm.Message{u, call("a", "b"), res("b", "a"), u}, ""},
		{"empty", []llm.Message{u, {Role: llm.RoleAssistant}}, "empty"},
		{"call without result", []llm.Message{u, call("a")}, "no results"},
		{"call then user", []llm.Message{u, call("a"), u}, "no results"},
		{"missing result", []llm.Message{u, call("a", "b"), res("a")}, `"b" has no result`},
		{"extra result", []llm.Message{u, call("a"), res("a", "z")}, `unknown tool call "z"`},
		{"double result", []llm.Message{u, call("a"), res("a", "a")}, "two results"},
		{"orphan results", []llm.Message{u, res("a")}, "without the tool calls"},
		{"duplicate ids", []llm.Message{u, call("a", "a"), res("a")}, "used twice"},
		{"call in user", []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolCallBlock{ID: "a"}}}}, "outside an assistant"},
		{"bad role", []llm.Message{{Role: "system", Content: []llm.Block{&llm.TextBlock{Text: "x"}}}}, "unknown role"},
	} {
		err := Validate(c.msgs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	a := newAgent(t, scripted.New(scripted.Config{}), nil)
	if err := a.SetTranscript([]llm.Message{u, call("a")}); err == nil {
		t.Error("SetTranscript accepted an invalid transcript")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	p := scripted.New(scripted.Config{})
	m := scriptedModel()
	for name, cfg := range map[string]Config{
		"no provider":  {Model: m},
		"no model":     {Provider: p},
		"negative max": {Provider: p, Model: m, MaxSteps: -1},
		"effort":       {Provider: p, Model: m, Reasoning: "extreme"},
		"threshold":    {Provider: p, Model: m, CompactThreshold: 1.5},
		"duplicate tools": {Provider: p, Model: m,
			Tools: toolList(&countingTool{name: "x"}, &countingTool{name: "x"})},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestRequestFields(t *testing.T) {
	var reqs []*llm.Request
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		reqs = append(reqs, req)
		return answer(sink, "ok", llm.Usage{}), nil
	})
	ls := &countingTool{name: "ls"}
	day := time.Date(2026, 5, 1, 23, 59, 59, 0, time.UTC)
	a, err := New(Config{
		Provider: p, Model: scriptedModel(), Tools: toolList(ls),
		MaxTokens: 1234, Reasoning: "high",
		Now: func() time.Time { day = day.Add(time.Second); return day },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Prompt(context.Background(), "a", nil, nil); err != nil {
		t.Fatal(err)
	}
	other := models.Model{ID: "other", Provider: "scripted", ContextWindow: 1000}
	if err := a.SetModel(other); err != nil {
		t.Fatal(err)
	}
	if err := a.Prompt(context.Background(), "b", nil, nil); err != nil {
		t.Fatal(err)
	}
	r := reqs[0]
	if r.Model != "scripted" || r.MaxTokens != 1234 || r.Reasoning != "high" || !r.ReasoningModel ||
		len(r.Tools) != 1 || r.Tools[0].Name != "ls" || string(r.Tools[0].Schema) != `{"type":"object"}` {
		t.Errorf("request = %+v", r)
	}
	// The default system prompt is built per call, with the date of the call.
	if !strings.Contains(r.System, "You are zot") || !strings.Contains(r.System, "- ls: Count calls.") ||
		!strings.Contains(r.System, "Current date (UTC): 2026-05-02") {
		t.Errorf("system prompt:\n%s", r.System)
	}
	if reqs[1].Model != "other" || reqs[1].ReasoningModel || a.Model().ID != "other" {
		t.Errorf("after SetModel: %s", reqs[1].Model)
	}
	if err := a.SetModel(models.Model{}); err == nil {
		t.Error("SetModel accepted a model without id")
	}
}

// TestDuplicateCallIDs gets calls with a repeated and an empty id from a
// provider: each gets its own id, so every result names its call.
func TestDuplicateCallIDs(t *testing.T) {
	ls := &countingTool{name: "ls"}
	n := 0
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		n++
		if n > 1 {
			return answer(sink, "ok", llm.Usage{}), nil
		}
		sink(llm.Event{Kind: llm.EventStart})
		return &llm.Response{Stop: llm.StopToolUse, Message: llm.Message{Content: []llm.Block{
			&llm.ToolCallBlock{ID: "same", Name: "ls", Args: []byte(`{}`)},
			&llm.ToolCallBlock{ID: "same", Name: "ls", Args: []byte(`{}`)},
			&llm.ToolCallBlock{Name: "ls"},
		}}}, nil
	})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(ls) })
	if err := a.Prompt(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(ls.calls()) != 3 || ls.calls()[2] != "{}" {
		t.Errorf("ls calls = %q", ls.calls())
	}
	checkValid(t, a)
}

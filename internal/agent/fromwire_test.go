package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

// decodeMessages decodes wire messages, one JSON object per line.
func decodeMessages(t *testing.T, lines ...string) []wire.Message {
	t.Helper()
	out := make([]wire.Message, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
	}
	return out
}

func TestFromWireRoundTrip(t *testing.T) {
	lines := []string{
		`{"role":"user","content":[{"type":"text","text":"hi"}],"time":"2026-01-02T05:04:05.678Z"}`,
		`{"role":"assistant","content":[{"type":"text","text":"calling"},{"type":"tool_call","id":"c1","name":"read","args":{"path":"a"}},{"type":"tool_call","id":"c2","name":"ls","args":"{bad"}],"time":"2026-01-02T05:04:06.000Z"}`,
		`{"role":"tool","content":[{"type":"tool_result","call_id":"c1","is_error":false,"content":[{"type":"text","text":"x"}]},{"type":"tool_result","call_id":"c2","is_error":true,"content":[]}],"time":"2026-01-02T05:04:07.000Z"}`,
		`{"role":"assistant","content":[{"type":"text","text":"done"}],"time":"2026-01-02T05:04:08.000Z"}`,
	}
	conv, err := FromWire(decodeMessages(t, lines...))
	if err != nil {
		t.Fatalf("FromWire: %v", err)
	}
	calls := conv[1].ToolCalls()
	if calls[1].ArgsError == "" || string(calls[1].Args) != "{}" {
		t.Errorf("arguments written as text came back as %s with error %q, want {} and an error", calls[1].Args, calls[1].ArgsError)
	}
	if r := conv[2].Content[0].(*llm.ToolResultBlock); r.Name != "read" {
		t.Errorf("result name = %q, want the call's tool, read", r.Name)
	}
	a := newAgent(t, scripted.New(scripted.Config{}), nil)
	if err := a.SetTranscript(conv); err != nil {
		t.Fatalf("SetTranscript: %v", err)
	}
	for i, m := range a.Messages() {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != lines[i] {
			t.Errorf("message %d =\n%s\nwant\n%s", i, b, lines[i])
		}
	}
}

func TestFromWireImagesAndTimes(t *testing.T) {
	conv, err := FromWire(decodeMessages(t,
		`{"role":"user","content":[{"type":"image","mime_type":"image/png","bytes":100}],"time":""}`,
	))
	if err != nil {
		t.Fatalf("FromWire: %v", err)
	}
	tb, ok := conv[0].Content[0].(*llm.TextBlock)
	if !ok || !strings.Contains(tb.Text, "image/png image of 100 bytes") {
		t.Errorf("image came back as %#v, want a text block naming it", conv[0].Content[0])
	}
	if !conv[0].Time.IsZero() {
		t.Errorf("empty time came back as %v, want zero", conv[0].Time)
	}
}

func TestFromWireRefuses(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"role":"system","content":[{"type":"text","text":"x"}],"time":""}`, `message 0: unknown role "system"`},
		{`{"role":"user","content":[{"type":"text","text":"x"}],"time":"yesterday"}`, `message 0: time "yesterday" is not RFC 3339`},
		{`{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"ls","args":[1]}],"time":""}`, `message 0: block 0: tool call "c": arguments are neither a JSON object nor a string`},
		{`{"role":"assistant","content":[{"type":"tool_call","id":"","name":"ls","args":{}}],"time":""}`, `message 0: block 0: tool call without an id`},
		{`{"role":"tool","content":[{"type":"tool_result","call_id":"c","is_error":false,"content":[{"type":"tool_call","id":"d","name":"ls","args":{}}]}],"time":""}`, `message 0: block 0: result of "c" holds a tool_call block`},
	} {
		_, err := FromWire(decodeMessages(t, c.line))
		if err == nil || err.Error() != c.want {
			t.Errorf("FromWire(%s) = %v, want %q", c.line, err, c.want)
		}
	}
	var nilBlock = []wire.Message{{Role: wire.RoleUser, Content: wire.ContentBlocks{nil}}}
	if _, err := FromWire(nilBlock); err == nil {
		t.Error("a nil block was accepted")
	}
}

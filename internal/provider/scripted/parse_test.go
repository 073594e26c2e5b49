package scripted

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// fullScript uses every field of the format.
const fullScript = `{"turns": [
		{"steps": [
			{"thinking": "hmm", "text": "héllo", "chunk": 16, "delay_ms": 5,
			 "tool_calls": [
				{"id": "t1", "name": "bash", "args": {"command": "ls",  "n": [1, 2]}},
				{"name": "read", "args_raw": "{not json"},
				{"name": "ls"}
			 ],
			 "usage": {"input": 120, "output": 40, "cache_read": 7, "cache_write": 9},
			 "stop": "length"},
			{"error": {"status": 429, "kind": "rate_limit_error", "message": "slow down",
			           "retry_after_ms": 1500, "times": 2}}
		]},
		{"steps": [
			{"echo": true, "error": {"after_bytes": 3, "kind": "api_error"}},
			{"cut_after": 4, "text": "abcdef"}
		]}
	]}`

func TestParseFullFormat(t *testing.T) {
	s := mustParse(t, fullScript)
	want := &Script{Turns: []Turn{
		{Steps: []Step{
			{
				Thinking: "hmm", Text: "héllo", Chunk: 16, Delay: 5 * time.Millisecond,
				ToolCalls: []ToolCall{
					{ID: "t1", Name: "bash", Args: `{"command":"ls","n":[1,2]}`},
					{Name: "read", Args: "{not json"},
					{Name: "ls", Args: "{}"},
				},
				Usage: &llm.Usage{Input: 120, Output: 40, CacheRead: 7, CacheWrite: 9},
				Stop:  llm.StopLength,
			},
			{Error: &Failure{Status: 429, Kind: "rate_limit_error", Message: "slow down", RetryAfter: 1500 * time.Millisecond, Times: 2}},
		}},
		{Steps: []Step{
			{Echo: true, Error: &Failure{AfterBytes: 3, Kind: "api_error"}},
			{CutAfter: 4, Text: "abcdef"},
		}},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %#v\nwant %#v", s, want)
	}
}

// parseErrorCases are scripts Parse refuses, with the error it gives.
func parseErrorCases() []struct{ name, text, want string } {
	step := func(s string) string { return `{"turns":[{"steps":[{"text":"ok"}]},{"steps":[` + s + `]}]}` }
	return []struct{ name, text, want string }{
		{"syntax", "{\"turns\": [\n  {\"steps\": [}]\n]}", "script.json:2:14: invalid JSON"},
		{"not object", `[]`, "script.json: want an object, got an array"},
		{"unknown top", `{"turns":[{"steps":[{}]}],"x":1}`, `script.json: unknown field "x"`},
		{"missing turns", `{}`, `script.json: missing "turns"`},
		{"empty turns", `{"turns":[]}`, "script.json: turns: must not be empty"},
		{"turn not object", `{"turns":[1]}`, "script.json: turns[0]: want an object, got a number"},
		{"missing steps", `{"turns":[{}]}`, `script.json: turns[0]: missing "steps"`},
		{"empty steps", `{"turns":[{"steps":[]}]}`, "script.json: turns[0].steps: must not be empty"},
		{"unknown step field", step(`{"txt":"a"}`), `script.json: turns[1].steps[0]: unknown field "txt"`},
		{"text type", step(`{"text":1}`), "script.json: turns[1].steps[0].text: want a string, got a number"},
		{"thinking type", step(`{"thinking":null}`), "script.json: turns[1].steps[0].thinking: want a string, got null"},
		{"echo type", step(`{"echo":"yes"}`), "script.json: turns[1].steps[0].echo: want true or false, got a string"},
		{"echo and text", step(`{"echo":true,"text":"a"}`), `script.json: turns[1].steps[0]: "echo" and "text" are exclusive`},
		{"chunk zero", step(`{"chunk":0}`), "script.json: turns[1].steps[0].chunk: 0 is out of range"},
		{"chunk fraction", step(`{"chunk":2.5}`), "script.json: turns[1].steps[0].chunk: want an integer, got 2.5"},
		{"delay negative", step(`{"delay_ms":-1}`), "script.json: turns[1].steps[0].delay_ms: -1 is out of range"},
		{"tool_calls type", step(`{"tool_calls":{}}`), "script.json: turns[1].steps[0].tool_calls: want an array, got an object"},
		{"tool missing name", step(`{"tool_calls":[{"args":{}}]}`), `script.json: turns[1].steps[0].tool_calls[0]: missing "name"`},
		{"tool empty name", step(`{"tool_calls":[{"name":""}]}`), "script.json: turns[1].steps[0].tool_calls[0].name: must not be empty"},
		{"tool unknown field", step(`{"tool_calls":[{"name":"a","arguments":{}}]}`), `script.json: turns[1].steps[0].tool_calls[0]: unknown field "arguments"`},
		{"tool args not object", step(`{"tool_calls":[{"name":"a","args":[1]}]}`), "script.json: turns[1].steps[0].tool_calls[0].args: want an object, got an array"},
		{"tool args_raw type", step(`{"tool_calls":[{"name":"a","args_raw":{}}]}`), "script.json: turns[1].steps[0].tool_calls[0].args_raw: want a string, got an object"},
		{"tool both args", step(`{"tool_calls":[{"name":"a","args":{},"args_raw":"{}"}]}`), `script.json: turns[1].steps[0].tool_calls[0]: "args" and "args_raw" are exclusive`},
		{"tool id type", step(`{"tool_calls":[{"name":"a","id":7}]}`), "script.json: turns[1].steps[0].tool_calls[0].id: want a string, got a number"},
		{"usage unknown", step(`{"usage":{"tokens":1}}`), `script.json: turns[1].steps[0].usage: unknown field "tokens"`},
		{"usage negative", step(`{"usage":{"output":-3}}`), "script.json: turns[1].steps[0].usage.output: -3 is out of range"},
		{"stop value", step(`{"stop":"stop"}`), `script.json: turns[1].steps[0].stop: want "end_turn", "tool_use" or "length", got "stop"`},
		{"error type", step(`{"error":"boom"}`), "script.json: turns[1].steps[0].error: want an object, got a string"},
		{"error empty", step(`{"error":{}}`), `script.json: turns[1].steps[0].error: needs "status" (fail before output) or "after_bytes" (fail mid-stream)`},
		{"error status range", step(`{"error":{"status":42}}`), "script.json: turns[1].steps[0].error.status: 42 is out of range [100, 599]"},
		{"error both", step(`{"error":{"status":500,"after_bytes":3}}`), `script.json: turns[1].steps[0].error: "status" and "after_bytes" are exclusive`},
		{"error times mid-stream", step(`{"error":{"after_bytes":3,"times":1}}`), `script.json: turns[1].steps[0].error: "times" applies only to "status" failures`},
		{"error times zero", step(`{"error":{"status":500,"times":0}}`), "script.json: turns[1].steps[0].error.times: 0 is out of range"},
		{"error unknown", step(`{"error":{"status":500,"code":1}}`), `script.json: turns[1].steps[0].error: unknown field "code"`},
		{"cut and error", step(`{"cut_after":2,"error":{"status":500}}`), `script.json: turns[1].steps[0]: "cut_after" and "error" are exclusive`},
		{"duplicate key", step(`{"text":"a","text":"b"}`), `script.json: turns[1].steps[0]: field "text" appears twice`},
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorCases() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text), "script.json")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	if err := os.WriteFile(p, []byte(`{"turns":[{"steps":[{"text":"hi"}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil || s.Turns[0].Steps[0].Text != "hi" {
		t.Fatalf("Load = %+v, %v", s, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"turns":[{"steps":[{"tool_calls":[{}]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": turns[0].steps[0].tool_calls[0]: missing \"name\"") {
		t.Errorf("err = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("err = %v", err)
	}
}

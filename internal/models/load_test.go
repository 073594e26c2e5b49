package models

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "models.json")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadOverridesAndAdds(t *testing.T) {
	p := writeFile(t, `{"models": [
		{"id": "claude-sonnet-5-5", "provider": "anthropic", "input": 1.5, "cache_read": 0.15},
		{"id": "qwen-local", "provider": "openai", "name": "Qwen (local)", "context_window": 32768,
		 "max_output": 4096, "reasoning": true, "images": false,
		 "input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
	]}`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Lookup("anthropic", "claude-sonnet-5-5")
	want := Model{
		ID: "claude-sonnet-5-5", Provider: "anthropic", Name: "Claude Sonnet 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 1.5, Output: 10, CacheRead: 0.15, CacheWrite: 2.50,
		ReasoningControl: llm.ReasoningEffort, ThinksByDefault: true, BoundThinking: true,
		Efforts: []string{"none", "low", "medium", "high", "xhigh", "max"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("override:\n got %+v\nwant %+v", s, want)
	}
	q, ok := c.Lookup("openai-responses", "qwen-local")
	wantQ := Model{
		ID: "qwen-local", Provider: "openai-responses", Name: "Qwen (local)",
		ContextWindow: 32768, MaxOutput: 4096, Reasoning: true,
	}
	if !ok || !reflect.DeepEqual(q, wantQ) {
		t.Errorf("added:\n got %+v, %v\nwant %+v", q, ok, wantQ)
	}
	if _, ok := c.Lookup("gemini", "gemini-2.5-pro"); !ok {
		t.Error("Load dropped the built-in models")
	}
}

func TestLoadNewModelWithOnlyIdentity(t *testing.T) {
	c, err := Load(writeFile(t, `{"models":[{"id":"m1","provider":"gemini"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Lookup("gemini", "m1")
	want := Model{ID: "m1", Provider: "gemini", Name: "m1", ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput, Unpriced: true}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v, want %+v", m, want)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string // substrings of the error, after the file name
	}{
		{"unknown field", `{"models":[{"id":"a","provider":"openai","contxt_window":5}]}`,
			[]string{`models[0]: unknown field "contxt_window"`}},
		{"wrong type", `{"models":[{"id":"a","provider":"openai","context_window":"big"}]}`,
			[]string{`models[0].context_window: want an integer, got a string`}},
		{"fraction", `{"models":[{"id":"a","provider":"openai","max_output":1.5}]}`,
			[]string{`models[0].max_output: want an integer, got 1.5`}},
		{"zero window", `{"models":[{"id":"a","provider":"openai","context_window":0}]}`,
			[]string{`models[0].context_window: 0 is out of range`}},
		{"price type", `{"models":[{"id":"a","provider":"openai","input":"cheap"}]}`,
			[]string{`models[0].input: want a number, got a string`}},
		{"negative price", `{"models":[{"id":"a","provider":"openai","output":-1}]}`,
			[]string{`models[0].output: a price must not be negative`}},
		{"bool type", `{"models":[{"id":"a","provider":"openai","reasoning":"yes"}]}`,
			[]string{`models[0].reasoning: want true or false, got a string`}},
		{"missing id", `{"models":[{"provider":"openai"}]}`,
			[]string{`models[0]: missing "id"`}},
		{"empty id", `{"models":[{"id":" ","provider":"openai"}]}`,
			[]string{`models[0].id: must not be empty`}},
		{"missing provider", `{"models":[{"id":"a"}, {"id":"b"}]}`,
			[]string{`models[0]: missing "provider"`}},
		{"unknown provider", `{"models":[{"id":"a","provider":"olama"}]}`,
			[]string{`models[0].provider: unknown provider "olama"`, "anthropic, openai"}},
		{"duplicate model", `{"models":[{"id":"a","provider":"openai"},{"id":"a","provider":"openai-responses"}]}`,
			[]string{`models[1]: openai-responses model "a" is already defined at models[0]`}},
		{"duplicate key", `{"models":[{"id":"a","id":"b","provider":"openai"}]}`,
			[]string{`models[0]: field "id" appears twice`}},
		{"entry not object", `{"models":[3]}`,
			[]string{`models[0]: want an object, got a number`}},
		{"models not array", `{"models":{}}`,
			[]string{`models: want an array, got an object`}},
		{"missing models", `{}`, []string{`missing "models"`}},
		{"top-level unknown", `{"models":[],"extra":1}`, []string{`unknown field "extra"`}},
		{"not an object", `[]`, []string{`want an object, got an array`}},
		{"syntax", "{\"models\": [\n  {\"id\": \"a\",}\n]}", []string{`:2:14: invalid JSON`}},
		{"empty", ``, []string{`:1:1: invalid JSON`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, tc.text)
			_, err := Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, p) {
				t.Errorf("error %q does not start with the file name", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestLoadErrorMergesNothing(t *testing.T) {
	c := Builtin()
	err := c.MergeJSON([]byte(`{"models":[{"id":"good","provider":"openai"},{"id":"bad"}]}`), "m.json")
	if err == nil {
		t.Fatal("no error")
	}
	if _, ok := c.Lookup("openai", "good"); ok {
		t.Error("a failed file merged its good entries")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.json"))
	if err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("err = %v", err)
	}
}

func TestLoadCapabilities(t *testing.T) {
	p := writeFile(t, `{"models": [
		{"id": "claude-next", "provider": "anthropic", "reasoning_control": "budget", "always_reasons": true},
		{"id": "gpt-next", "provider": "openai", "reasoning_control": "effort", "no_chat_tools_reasoning": true}
	]}`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Lookup("anthropic", "claude-next"); m.ReasoningControl != llm.ReasoningBudget || !m.AlwaysReasons {
		t.Errorf("claude-next: %+v", m)
	}
	if m, _ := c.Lookup("openai", "gpt-next"); m.ReasoningControl != llm.ReasoningEffort || !m.NoChatToolsReasoning {
		t.Errorf("gpt-next: %+v", m)
	}
	bad := writeFile(t, `{"models": [{"id": "x", "provider": "anthropic", "reasoning_control": "lots"}]}`)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), `models[0].reasoning_control: want "budget", "effort" or "", got "lots"`) {
		t.Errorf("bad control: %v", err)
	}
}

// TestLoadReasoningFacts: a model file says which reasoning levels a
// model takes, whether it thinks by default and whether its thinking is
// bound to the conversation; levels are checked and put in order.
func TestLoadReasoningFacts(t *testing.T) {
	c, err := Load(writeFile(t, `{"models":[{"id":"local-r1","provider":"ollama","reasoning":true,
		"reasoning_levels":["high","none","low"],"thinks_by_default":true,"bound_thinking":false,"input":0,"output":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Lookup("ollama", "local-r1")
	if !reflect.DeepEqual(m.Efforts, []string{"none", "low", "high"}) || !m.ThinksByDefault || m.BoundThinking || m.Unpriced {
		t.Errorf("%+v", m)
	}
	if err := m.TakesEffort("medium"); err == nil || !strings.Contains(err.Error(), "(it takes none, low, high)") {
		t.Errorf("medium: %v", err)
	}
	for _, tc := range []struct{ text, want string }{
		{`{"models":[{"id":"a","provider":"ollama","reasoning_levels":["huge"]}]}`, `models[0].reasoning_levels[0]: want one of none, minimal, low, medium, high, xhigh, max, got "huge"`},
		{`{"models":[{"id":"a","provider":"ollama","reasoning_levels":["low","low"]}]}`, `models[0].reasoning_levels[1]: "low" is listed twice`},
		{`{"models":[{"id":"a","provider":"ollama","reasoning_levels":"low"}]}`, `models[0].reasoning_levels: want an array`},
	} {
		if _, err := Load(writeFile(t, tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.text, err)
		}
	}
}

package models

import (
	"reflect"
	"slices"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/registry"
)

func TestBuiltinHasRequiredModels(t *testing.T) {
	c := Builtin()
	want := map[string][]string{
		"anthropic": {"claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5", "claude-sonnet-5", "claude-haiku-4-5"},
		"openai":    {"gpt-6.1-sol", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini"},
		"gemini":    {"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3.8-flash", "gemini-3.1-pro-preview"},
		"scripted":  {"scripted"},
	}
	for p, ids := range want {
		for _, id := range ids {
			if _, ok := c.Lookup(p, id); !ok {
				t.Errorf("Lookup(%q, %q) missing", p, id)
			}
		}
	}
}

func TestBuiltinModelsAreSane(t *testing.T) {
	c := Builtin()
	for _, p := range registry.Names() {
		list := c.List(p)
		if p == "ollama" {
			// A local server's models are its own: none is built in.
			if len(list) != 0 {
				t.Errorf("ollama lists %v", ids(list))
			}
			continue
		}
		if len(list) == 0 {
			t.Errorf("provider %q has no models", p)
		}
		for _, m := range list {
			if m.Provider != p || m.ID == "" || m.Name == "" {
				t.Errorf("%s: bad identity %+v", p, m)
			}
			if m.ContextWindow <= 0 || m.MaxOutput <= 0 || m.MaxOutput > m.ContextWindow {
				t.Errorf("%s/%s: limits context=%d output=%d", p, m.ID, m.ContextWindow, m.MaxOutput)
			}
			if m.Unpriced {
				if m.Input != 0 || m.Output != 0 || m.CacheRead != 0 || m.CacheWrite != 0 {
					t.Errorf("%s/%s: unpriced with prices %+v", p, m.ID, m)
				}
			} else if m.Input <= 0 || m.Output <= 0 || m.CacheRead < 0 || m.CacheWrite < 0 {
				t.Errorf("%s/%s: prices %+v", p, m.ID, m)
			}
		}
		id, ok := c.Default(p)
		if !ok {
			t.Errorf("provider %q has no default", p)
			continue
		}
		if _, ok := c.Lookup(p, id); !ok {
			t.Errorf("default %q of %q is not in the catalog", id, p)
		}
	}
}

func TestLookup(t *testing.T) {
	c := Builtin()
	m, ok := c.Lookup("anthropic", "claude-haiku-4-5")
	if !ok {
		t.Fatal("claude-haiku-4-5 missing")
	}
	want := Model{
		ID: "claude-haiku-4-5", Provider: "anthropic", Name: "Claude Haiku 4.5",
		ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true, Images: true,
		Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25,
		ReasoningControl: llm.ReasoningBudget, Efforts: []string{"none", "low", "medium", "high"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v\nwant %+v", m, want)
	}
	if _, ok := c.Lookup("anthropic", "gpt-5"); ok {
		t.Error("an OpenAI model was found under anthropic")
	}
	if _, ok := c.Lookup("nope", "gpt-5"); ok {
		t.Error("a model was found under an unknown provider")
	}
	if m, _ := c.Lookup("openai", "gpt-4.1"); m.Reasoning {
		t.Error("gpt-4.1 marked as a reasoning model")
	}
}

func TestOpenAIProvidersShareModels(t *testing.T) {
	c := Builtin()
	chat, resp := c.List("openai"), c.List("openai-responses")
	if len(chat) != len(resp) {
		t.Fatalf("openai has %d models, openai-responses %d", len(chat), len(resp))
	}
	for i := range chat {
		if resp[i].Provider != "openai-responses" {
			t.Errorf("listed under openai-responses with Provider %q", resp[i].Provider)
		}
		resp[i].Provider = "openai"
		if !reflect.DeepEqual(chat[i], resp[i]) {
			t.Errorf("model %d differs: %+v vs %+v", i, chat[i], resp[i])
		}
	}
	m, ok := c.Lookup("openai-responses", "o3")
	if !ok || m.Provider != "openai-responses" {
		t.Errorf("Lookup(openai-responses, o3) = %+v, %v", m, ok)
	}
	a, _ := c.Default("openai")
	b, _ := c.Default("openai-responses")
	if a == "" || a != b {
		t.Errorf("defaults differ: %q vs %q", a, b)
	}
	c.Merge([]Model{{ID: "my-tuned", Provider: "openai-responses", Input: 1}})
	if _, ok := c.Lookup("openai", "my-tuned"); !ok {
		t.Error("a model merged under openai-responses is not seen by openai")
	}
}

func TestListSortedAndStable(t *testing.T) {
	c := Builtin()
	first := c.List("gemini")
	if !slices.IsSortedFunc(first, func(a, b Model) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	}) {
		t.Errorf("not sorted: %v", ids(first))
	}
	for range 20 {
		if again := c.List("gemini"); !reflect.DeepEqual(again, first) {
			t.Fatalf("List changed between calls: %v vs %v", ids(again), ids(first))
		}
	}
	if got := c.List("nope"); len(got) != 0 {
		t.Errorf("unknown provider lists %v", ids(got))
	}
}

func ids(ms []Model) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestResolveUnknownGetsDefaults(t *testing.T) {
	c := Builtin()
	got := c.Resolve("openai", "future-model")
	want := Model{
		ID: "future-model", Provider: "openai", Name: "future-model",
		ContextWindow: 128_000, MaxOutput: 0, Unpriced: true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if known := c.Resolve("gemini", "gemini-2.5-pro"); known.ContextWindow != 1_048_576 {
		t.Errorf("Resolve of a known model = %+v", known)
	}
}

func TestDefaultUnknownProvider(t *testing.T) {
	if id, ok := Builtin().Default("nope"); ok {
		t.Errorf("Default(nope) = %q, true", id)
	}
}

func TestMergeAddsAndOverrides(t *testing.T) {
	c := Builtin()
	c.Merge([]Model{
		{ID: "claude-opus-5", Provider: "anthropic", Input: 1, Output: 2},
		{ID: "local-llama", Provider: "openai", Input: 0, Output: 0},
	})
	m, _ := c.Lookup("anthropic", "claude-opus-5")
	if m.Input != 1 || m.Output != 2 || m.CacheRead != 0 || m.Reasoning {
		t.Errorf("override = %+v, want the given prices and flags", m)
	}
	if m.Name != "Claude Opus 5" || m.ContextWindow != 1_000_000 || m.MaxOutput != 128_000 {
		t.Errorf("override lost name or limits: %+v", m)
	}
	n, ok := c.Lookup("openai", "local-llama")
	if !ok || n.Name != "local-llama" || n.ContextWindow != DefaultContextWindow || n.MaxOutput != DefaultMaxOutput {
		t.Errorf("new model = %+v, %v", n, ok)
	}
	if fresh, _ := Builtin().Lookup("anthropic", "claude-opus-5"); fresh.Input != 5 {
		t.Errorf("Merge changed another catalog: %+v", fresh)
	}
}

func TestAliases(t *testing.T) {
	c := Builtin()
	// A dated snapshot is the same model, sent under the id asked for.
	m, ok := c.Lookup("anthropic", "claude-haiku-4-5-20251001")
	if !ok || m.ID != "claude-haiku-4-5-20251001" || m.Input != 1 || m.ReasoningControl != llm.ReasoningBudget {
		t.Errorf("snapshot: %+v, %v", m, ok)
	}
	if _, retired := c.Successor("anthropic", "claude-haiku-4-5-20251001"); retired {
		t.Error("a snapshot was reported as retired")
	}
	// A retired id resolves to its successor, whose id is sent.
	for _, id := range []string{"deepseek-chat", "deepseek-reasoner", "deepseek-v4-flash"} {
		m, ok := c.Lookup("deepseek", id)
		if next, retired := c.Successor("deepseek", id); !ok || m.ID != "deepseek-flash" || !retired || next != "deepseek-flash" {
			t.Errorf("%s: %+v, %v; successor %q", id, m, ok, next)
		}
	}
	if _, retired := c.Successor("deepseek", "deepseek-flash"); retired {
		t.Error("a current id was reported as retired")
	}
}

// TestCapabilities pins the request capabilities the providers read: which
// control sets each family's reasoning, which models think on every call,
// and which OpenAI models refuse tools with reasoning on Chat Completions.
func TestCapabilities(t *testing.T) {
	c := Builtin()
	cases := []struct {
		provider, id string
		control      llm.ReasoningControl
		always       bool
		noChatTools  bool
	}{
		{"anthropic", "claude-sonnet-5-5", llm.ReasoningEffort, false, false},
		{"anthropic", "claude-fable-5-1", llm.ReasoningEffort, true, false},
		{"anthropic", "claude-haiku-4-5", llm.ReasoningBudget, false, false},
		{"openai", "gpt-6.1-sol", llm.ReasoningEffort, false, true},
		{"openai-responses", "gpt-6-luna", llm.ReasoningEffort, false, true},
		{"openai", "gpt-5", llm.ReasoningEffort, false, false},
		{"openai", "gpt-4.1", "", false, false},
		{"gemini", "gemini-3.8-flash", llm.ReasoningEffort, false, false},
		{"gemini", "gemini-2.5-pro", llm.ReasoningBudget, false, false},
		{"deepseek", "deepseek-flash", llm.ReasoningEffort, true, false},
	}
	for _, tc := range cases {
		m, ok := c.Lookup(tc.provider, tc.id)
		if !ok || m.ReasoningControl != tc.control || m.AlwaysReasons != tc.always || m.NoChatToolsReasoning != tc.noChatTools {
			t.Errorf("%s %s: %+v", tc.provider, tc.id, m)
		}
		var req llm.Request
		m.Describe(&req)
		if req.ReasoningControl != tc.control || req.AlwaysReasons != tc.always || req.NoChatToolsReasoning != tc.noChatTools ||
			req.MaxOutput != m.MaxOutput || req.ReasoningModel != m.Reasoning {
			t.Errorf("%s %s: Describe gave %+v", tc.provider, tc.id, req)
		}
	}
}

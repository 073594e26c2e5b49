package models

import (
	"path/filepath"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// TestListedRoundTrip: what a refresh learned is saved, read back and
// added to a catalog: new ids with their limits, unpriced, placed by the
// family rules; built-in models keep their facts.
func TestListedRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "models-cache.json")
	l, err := LoadListed(path)
	if err != nil || len(l.Providers) != 0 {
		t.Fatalf("missing file: %v, %+v", err, l)
	}
	l.Set("anthropic", time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC), []llm.ListedModel{
		{ID: "claude-sonnet-5-5", ContextWindow: 5, MaxOutput: 5},
		{ID: "claude-opus-5-7", ContextWindow: 2_000_000, MaxOutput: 256_000},
		{ID: "claude-opus-5-7"}, {ID: ""},
	})
	if err := l.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadListed(path)
	if err != nil || len(back.Providers["anthropic"].Models) != 2 {
		t.Fatalf("%v, %+v", err, back)
	}
	c := Builtin()
	c.AddListed(back)
	m, ok := c.Lookup("anthropic", "claude-opus-5-7")
	if !ok || m.ContextWindow != 2_000_000 || m.MaxOutput != 256_000 || !m.Unpriced || m.ReasoningControl != llm.ReasoningEffort || !m.BoundThinking {
		t.Errorf("listed model: %+v, %v", m, ok)
	}
	if s, _ := c.Lookup("anthropic", "claude-sonnet-5-5"); s.ContextWindow != 1_000_000 || s.Unpriced {
		t.Errorf("a built-in model took the listed facts: %+v", s)
	}
}

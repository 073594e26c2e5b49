package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// A session's own settings (what the Go SDK's Config gives, the same
// type): its script, models file and permission policy win over the
// host's.
func TestSessionConfigOwnSettings(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"from the session's script"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	modelsFile := filepath.Join(dir, "models.json")
	if err := os.WriteFile(modelsFile, []byte(`{"models":[{"id":"house-model","provider":"scripted","context_window":1000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := NewHost(HostConfig{})
	t.Cleanup(func() { h.Close() })
	s, err := h.NewSession(SessionConfig{Provider: "scripted", CWD: dir, Script: script, ModelsFile: modelsFile, Permission: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(s.Models(), func(m wire.ModelInfo) bool { return m.ID == "house-model" && m.ContextWindow == 1000 }) {
		t.Errorf("the session's models lack its models file's: %+v", s.Models())
	}
	if slices.ContainsFunc(h.Models("scripted"), func(m wire.ModelInfo) bool { return m.ID == "house-model" }) {
		t.Error("the session's models file changed the host's catalog")
	}
	if m := s.Mode(); m != ModeReadOnly {
		t.Errorf("Permission deny: mode %q", m)
	}
	c := newCollector()
	if err := s.Submit(Work{Prompt: &PromptInput{Text: "hi"}, Sink: c.sink}, Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	var text string
	for _, ev := range c.events() {
		if d, ok := ev.(*wire.TextDeltaEvent); ok {
			text += d.Delta
		}
	}
	if text != "from the session's script" {
		t.Errorf("answer %q: the session's Script was not played", text)
	}
	if _, err := h.NewSession(SessionConfig{Provider: "scripted", CWD: dir, Permission: "sometimes"}); err == nil || !strings.Contains(err.Error(), "Permission") {
		t.Errorf("an unknown Permission: %v", err)
	}
	if _, err := h.NewSession(SessionConfig{Provider: "scripted", CWD: dir, ModelsFile: filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "models file") {
		t.Errorf("a missing models file: %v", err)
	}
}

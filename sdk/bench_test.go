package sdk

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPrompt measures one short prompt through the Runtime on the
// scripted provider: the per-prompt overhead of the agent and the SDK.
func BenchmarkPrompt(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"ok","usage":{"input":10,"output":1}}]}]}`), 0o644)
	rt, err := New(Config{Provider: "scripted", Script: script, CWD: dir, AutoCompactOff: true})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := rt.Clear(); err != nil {
			b.Fatal(err)
		}
		events, err := rt.Prompt(ctx, "hello", nil)
		if err != nil {
			b.Fatal(err)
		}
		for range events {
		}
	}
}

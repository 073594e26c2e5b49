package sdk

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"zot.dev/zot/bench/fakeprovider"
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
		if err := rt.Clear(context.Background()); err != nil {
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

// BenchmarkPromptLoopback measures one short prompt through the Runtime
// and a real provider client talking to the benchmarks' loopback fake
// provider, as `zot rpc` runs it; the transcript grows to 100 prompts and
// starts again, like the sequential part of `make bench`.
func BenchmarkPromptLoopback(b *testing.B) {
	fake, err := fakeprovider.New()
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	for _, p := range []struct{ name, url string }{
		{"anthropic", fake.AnthropicURL()},
		{"openai", fake.OpenAIURL()},
	} {
		b.Run(p.name, func(b *testing.B) {
			dir := b.TempDir()
			rt, err := New(Config{Provider: p.name, Model: "bench-model", APIKey: "test-key", BaseURL: p.url, CWD: dir})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			ctx := context.Background()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if n++; n%100 == 0 {
					if err := rt.Clear(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				events, err := rt.Prompt(ctx, fakeprovider.PromptShort, nil)
				if err != nil {
					b.Fatal(err)
				}
				for range events {
				}
			}
		})
	}
}

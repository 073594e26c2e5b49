package rpcclient

import (
	"context"
	"testing"
)

// benchClient starts zot on a script of one answer streamed in 2000
// pieces, so a prompt's cost is the client's handling of its events.
func benchClient(b *testing.B) *Client {
	script := writeScript(b, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": string(make([]byte, 4000)), "chunk": 2, "usage": map[string]any{"input": 10, "output": 1}},
	}}}})
	c, err := Start(context.Background(), Options{
		Bin:  zotBin,
		Args: []string{"--provider", "scripted", "--cwd", b.TempDir(), "--script", script, "--no-auto-compact"},
		Env:  cleanEnv(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// BenchmarkPromptChannel reads each prompt's events from Prompt's
// channel, as client.Client hands them out.
func BenchmarkPromptChannel(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	for b.Loop() {
		if err := c.Clear(ctx); err != nil {
			b.Fatal(err)
		}
		events, err := c.Prompt(ctx, "hello", nil)
		if err != nil {
			b.Fatal(err)
		}
		for range events {
		}
	}
}

// BenchmarkPromptStream reads each prompt's events from the Stream of
// the deprecated PromptStream, for comparison.
func BenchmarkPromptStream(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	for b.Loop() {
		if err := c.Clear(ctx); err != nil {
			b.Fatal(err)
		}
		s, err := c.PromptStream(ctx, "hello", nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Collect(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

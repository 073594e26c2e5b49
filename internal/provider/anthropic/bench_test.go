package anthropic

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/reqbody"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
)

// BenchmarkHandleTextDelta measures decoding one content_block_delta
// event and reporting it to the sink.
func BenchmarkHandleTextDelta(b *testing.B) {
	a := newAssembler(func(llm.Event) {})
	start := httpcall.Event{Name: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)}
	if err := a.handle(start); err != nil {
		b.Fatal(err)
	}
	ev := httpcall.Event{Name: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok "}}`)}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.handle(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamTextDeltas measures a whole call over loopback HTTP whose
// answer is 10,000 text deltas: SSE parsing, decoding and reporting.
func BenchmarkStreamTextDeltas(b *testing.B) {
	head := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	tail := "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":10000}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	providertest.StreamBenchmark(b, dial, simpleRequest(), head, tail, func(w io.Writer, i int) {
		fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok%d \"}}\n\n", i)
	})
}

// BenchmarkBuildRequest measures encoding the body of the next model call
// in a session of 100 prompts with a tool round trip each (400 messages),
// without and with the caches a provider keeps.
func BenchmarkBuildRequest(b *testing.B) {
	req := fullTranscript()
	req.Messages = nil
	for i := range 100 {
		id := fmt.Sprintf("toolu_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: fmt.Sprintf("Prompt %d: look at the file and fix the bug.", i)}}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "Reading it."}, &llm.ToolCallBlock{ID: id, Name: "read", Args: []byte(`{"path":"main.go"}`)}}},
			llm.Message{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: id, Name: "read", Content: []llm.Block{&llm.TextBlock{Text: "package main\n\nfunc main() {}\n"}}}}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "Fixed: the loop now stops at the end of the slice."}}},
		)
	}
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := buildRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		var tools reqbody.ToolCache
		var msgs reqbody.MessageCache
		b.ReportAllocs()
		for b.Loop() {
			if _, err := buildRequestCached(req, &tools, &msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A model with bound thinking whose every answer thought: each block's
	// prefix is checked and the request's own fingerprinted (bound.go).
	bound := *req
	bound.Model, bound.BoundThinking = "claude-sonnet-5-5", true
	bound.Messages = nil
	var tools reqbody.ToolCache
	for i, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			probe := bound
			probe.Messages = bound.Messages
			_, prefix, err := buildPayload(&probe, caches{tools: &tools})
			if err != nil {
				b.Fatal(err)
			}
			m.Content = append([]llm.Block{&llm.ThinkingBlock{Provider: providerName, Text: "thinking", Signature: fmt.Sprintf("sig%d", i), Model: bound.Model, Prefix: prefix}}, m.Content...)
		}
		bound.Messages = append(bound.Messages, m)
	}
	b.Run("bound cached", func(b *testing.B) {
		var tools reqbody.ToolCache
		var msgs reqbody.MessageCache
		b.ReportAllocs()
		for b.Loop() {
			p, _, err := buildPayload(&bound, caches{tools: &tools, msgs: &msgs})
			if err != nil {
				b.Fatal(err)
			}
			if strings.Count(string(p.Bytes()), `"type":"thinking"`) != 200 {
				b.Fatal("thinking was left out")
			}
		}
	})
}

// BenchmarkBuildToolTripRequest measures encoding the body of the call
// that follows a read tool's result, in a short session like the tool
// round trips of `make bench`: zot's system prompt and built-in tools, a
// prompt and five bash and five read round trips (a 7 KB file each), with
// the provider's caches as a session uses them ("head" adds the cache of
// the members before the messages; "buffer" the reuse of the buffer of
// the body sent before).
func BenchmarkBuildToolTripRequest(b *testing.B) {
	builtins := tools.Builtins(tools.Config{CWD: "/project"})
	req := &llm.Request{
		Model:  "claude-sonnet-4-5",
		System: sysprompt.Build(sysprompt.Options{CWD: "/project", Tools: builtins}),
	}
	for _, t := range builtins {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
	}
	file := strings.Repeat("     1\ta line of the benchmark's text file, with some words in it\n", 120)
	req.Messages = []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hello"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "Hello! How can I help?"}}},
	}
	for i := range 10 {
		id := fmt.Sprintf("toolu_%d", i)
		call, out := &llm.ToolCallBlock{ID: id, Name: "bash", Args: []byte(`{"command":"echo hi"}`)}, "hi\n[exit code 0]"
		if i%2 == 1 {
			call, out = &llm.ToolCallBlock{ID: id, Name: "read", Args: []byte(`{"path":"/project/notes.txt"}`)}, file
		}
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "Run the tool, please."}}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call}},
			llm.Message{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: id, Name: call.Name, Content: []llm.Block{&llm.TextBlock{Text: out}}}}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "The tool said: " + out[:10]}}},
		)
	}
	req.Messages = req.Messages[:len(req.Messages)-1] // the call after the last result
	for _, name := range []string{"cached", "cached head", "cached head buffer"} {
		b.Run(name, func(b *testing.B) {
			var heads headCache
			var tools reqbody.ToolCache
			var msgs reqbody.MessageCache
			var bufs reqbody.Buffers
			c := caches{tools: &tools, msgs: &msgs}
			if name != "cached" {
				c.head = &heads
			}
			if name == "cached head buffer" {
				c.bufs = &bufs
			}
			b.ReportAllocs()
			for b.Loop() {
				p, _, err := buildPayload(req, c)
				if err != nil {
					b.Fatal(err)
				}
				// Sent: the transport reads the body and closes it.
				r := p.Reader()
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
				if c, ok := r.(io.Closer); ok {
					c.Close()
				}
				p.Release()
			}
		})
	}
}

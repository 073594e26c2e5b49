package openai

import (
	"fmt"
	"io"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
)

// BenchmarkHandleTextDelta measures decoding one content_block_delta
// event and reporting it to the sink.
func BenchmarkHandleTextDelta(b *testing.B) {
	a := newAssembler("openai", func(llm.Event) {})
	ev := httpcall.Event{Name: "message", Data: []byte(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}`)}
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
	tail := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10000,\"total_tokens\":10010}}\n\n" +
		"data: [DONE]\n\n"
	providertest.StreamBenchmark(b, dial, simpleRequest(), "", tail, func(w io.Writer, i int) {
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
	})
}

package responses

import (
	"fmt"
	"io"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
)

// BenchmarkHandleTextDelta measures decoding one response.output_text.delta
// event and reporting it to the sink.
func BenchmarkHandleTextDelta(b *testing.B) {
	a := newAssembler("openai-responses", func(llm.Event) {})
	added := `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`
	if err := a.handle(httpcall.Event{Name: "response.output_item.added", Data: []byte(added)}); err != nil {
		b.Fatal(err)
	}
	ev := httpcall.Event{Name: "response.output_text.delta", Data: []byte(`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"tok ","logprobs":[]}`)}
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
	head := "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n"
	tail := "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":10000}}}\n\n"
	providertest.StreamBenchmark(b, dial, simpleRequest(), head, tail, func(w io.Writer, i int) {
		fmt.Fprintf(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"tok%d \",\"logprobs\":[]}\n\n", i+2, i)
	})
}

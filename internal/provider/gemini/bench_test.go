package gemini

import (
	"fmt"
	"io"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

// BenchmarkHandleTextDelta measures decoding one streamed chunk carrying a
// piece of text (with the usage metadata Gemini puts on every chunk) and
// reporting it to the sink.
func BenchmarkHandleTextDelta(b *testing.B) {
	a := newAssembler(func(llm.Event) {})
	data := []byte(`{"candidates":[{"content":{"parts":[{"text":"tok "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1200,"totalTokenCount":1200},"modelVersion":"gemini-test","responseId":"r-bench"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := a.handle(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamTextDeltas measures a whole call over loopback HTTP whose
// answer is 10,000 text chunks: SSE parsing, decoding and reporting.
func BenchmarkStreamTextDeltas(b *testing.B) {
	tail := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":10000}}\r\n\r\n"
	providertest.StreamBenchmark(b, dial, simpleRequest(), "", tail, func(w io.Writer, i int) {
		fmt.Fprintf(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"tok%d \"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"totalTokenCount\":10},\"modelVersion\":\"gemini-test\",\"responseId\":\"r-bench\"}\r\n\r\n", i)
	})
}

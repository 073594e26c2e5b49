package gemini

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"zot.dev/zot/internal/llm"
)

// benchDeltas is the number of text chunks of the streamed benchmark body.
const benchDeltas = 10000

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
// answer is 10,000 text chunks: SSE parsing, decoding and reporting. It
// reports the cost per chunk.
func BenchmarkStreamTextDeltas(b *testing.B) {
	var body bytes.Buffer
	for i := range benchDeltas {
		fmt.Fprintf(&body, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"tok%d \"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"totalTokenCount\":10},\"modelVersion\":\"gemini-test\",\"responseId\":\"r-bench\"}\r\n\r\n", i)
	}
	body.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":10000}}\r\n\r\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	p := New(Config{BaseURL: srv.URL})
	deltas := 0
	sink := func(ev llm.Event) {
		if ev.Kind == llm.EventTextDelta {
			deltas++
		}
	}
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		deltas = 0
		if _, err := p.Stream(context.Background(), simpleRequest(), sink); err != nil {
			b.Fatal(err)
		}
		if deltas != benchDeltas {
			b.Fatalf("%d deltas", deltas)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchDeltas), "ns/delta")
}

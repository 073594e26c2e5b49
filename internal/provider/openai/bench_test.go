package openai

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/transport"
)

// benchDeltas is the number of text deltas of the streamed benchmark body.
const benchDeltas = 10000

// BenchmarkHandleTextDelta measures decoding one content_block_delta
// event and reporting it to the sink.
func BenchmarkHandleTextDelta(b *testing.B) {
	a := newAssembler("openai", func(llm.Event) {})
	ev := transport.Event{Name: "message", Data: []byte(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}`)}
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
	var body bytes.Buffer
	for i := range benchDeltas {
		fmt.Fprintf(&body, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
	}
	body.WriteString("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	body.WriteString("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10000,\"total_tokens\":10010}}\n\n")
	body.WriteString("data: [DONE]\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	p := New(Config{APIKey: "test-key", BaseURL: srv.URL})
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

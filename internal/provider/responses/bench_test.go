package responses

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

// BenchmarkHandleTextDelta measures decoding one response.output_text.delta
// event and reporting it to the sink.
func BenchmarkHandleTextDelta(b *testing.B) {
	a := newAssembler("openai-responses", func(llm.Event) {})
	added := `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`
	if err := a.handle(transport.Event{Name: "response.output_item.added", Data: []byte(added)}); err != nil {
		b.Fatal(err)
	}
	ev := transport.Event{Name: "response.output_text.delta", Data: []byte(`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"tok ","logprobs":[]}`)}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.handle(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamTextDeltas measures a whole call over loopback HTTP whose
// answer is 10,000 text deltas: SSE parsing, decoding and reporting. It
// reports the cost per delta.
func BenchmarkStreamTextDeltas(b *testing.B) {
	var body bytes.Buffer
	body.WriteString("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n")
	for i := range benchDeltas {
		fmt.Fprintf(&body, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"tok%d \",\"logprobs\":[]}\n\n", i+2, i)
	}
	body.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":10000}}}\n\n")
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

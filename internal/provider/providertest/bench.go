package providertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"zot.dev/zot/internal/llm"
)

// StreamDeltas is the number of text deltas in the answer of
// [StreamBenchmark].
const StreamDeltas = 10000

// StreamBenchmark measures whole calls of req over loopback HTTP through
// the provider dial returns. Every call is answered with one event stream:
// head, then [StreamDeltas] events that delta writes (the i-th carrying one
// piece of text), then tail. It reports the bytes per call and the cost
// per delta ("ns/delta"): SSE parsing, decoding and reporting.
func StreamBenchmark(b *testing.B, dial Dial, req *llm.Request, head, tail string, delta func(w io.Writer, i int)) {
	b.Helper()
	var body bytes.Buffer
	body.WriteString(head)
	for i := range StreamDeltas {
		delta(&body, i)
	}
	body.WriteString(tail)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	p := dial(srv, &Sleeps{})
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
		if _, err := p.Stream(context.Background(), req, sink); err != nil {
			b.Fatal(err)
		}
		if deltas != StreamDeltas {
			b.Fatalf("%d deltas, want %d", deltas, StreamDeltas)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*StreamDeltas), "ns/delta")
}

package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// BenchmarkNext reads 10,000 small events per iteration, the shape of a
// text-delta stream, with the idle timer armed as in real use.
func BenchmarkNext(b *testing.B) {
	var buf bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok%d\"}}\n\n", i)
	}
	input := buf.Bytes()
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		s := newStream(context.Background(), func() {}, "bench", io.NopCloser(bytes.NewReader(input)), time.Minute)
		n := 0
		for {
			_, err := s.Next()
			if err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		s.Close()
		if n != 10000 {
			b.Fatalf("read %d events", n)
		}
	}
}

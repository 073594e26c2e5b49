package anthropic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/internal/llm"
)

// TestBodiesInReusedBuffers: calls of one provider build each body in the
// buffer of the body sent before; what the server receives is, call after
// call, what a fresh encoding of each request gives, as the transcript
// grows, shrinks and grows again.
func TestBodiesInReusedBuffers(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"+
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()
	p := New(Config{APIKey: "test-key", BaseURL: srv.URL})

	req := fullTranscript()
	all := req.Messages
	var want []string
	for _, n := range []int{1, 2, len(all), 1, len(all)} {
		r := *req
		r.Messages = append([]llm.Message(nil), all[:n]...)
		// A long message in the middle grows the body past any buffer kept.
		if n == len(all) && len(want) == 4 {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: strings.Repeat("grow ", 20000)}}})
		}
		fresh, err := buildRequest(&r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(fresh))
		if _, err := p.Stream(context.Background(), &r, nil); err != nil {
			t.Fatalf("call %d: %v", len(want), err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("server received %d bodies, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: body received differs from a fresh encoding:\n%s\nwant:\n%s", i+1, got[i], want[i])
		}
	}
}

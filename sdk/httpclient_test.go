package sdk

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// countingTransport counts the requests it carries.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestConfigHTTPClient: Config.HTTPClient sends the provider's requests.
// The loopback server answers in OpenAI's Chat Completions stream format
// (ChatCompletionChunk of the openai npm package 7.57.0).
func TestConfigHTTPClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"counted"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	var tr countingTransport
	rt, err := New(Config{Provider: "openai", Model: "gpt-4.1", APIKey: "test-key", BaseURL: srv.URL, CWD: t.TempDir(),
		HTTPClient: &http.Client{Transport: &tr}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ch, err := rt.Prompt(context.Background(), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, ev := range drain(t, ch) {
		if d, ok := ev.(*wire.TextDeltaEvent); ok {
			text.WriteString(d.Delta)
		}
	}
	if text.String() != "counted" || tr.n.Load() != 1 {
		t.Errorf("answer %q, %d requests through the client; want \"counted\" and 1", text.String(), tr.n.Load())
	}
}

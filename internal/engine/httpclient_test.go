package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// chatAnswer is an answer in OpenAI's Chat Completions stream format
// (ChatCompletionChunk of the openai npm package 7.57.0).
const chatAnswer = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
	"data: [DONE]\n\n"

// chatServer is a loopback Chat Completions server that answers every
// request with chatAnswer.
func chatServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, chatAnswer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// counting is a transport that counts the requests it carries.
type counting struct{ n atomic.Int64 }

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPClientCarriesProviderRequests: the provider sends its requests
// through the session's HTTP client, else the host's.
func TestHTTPClientCarriesProviderRequests(t *testing.T) {
	srv := chatServer(t)
	var hostT, sessT counting
	h := NewHost(HostConfig{
		Providers:  map[string]ProviderSettings{"openai": {APIKey: "test-key", BaseURL: srv.URL}},
		HTTPClient: &http.Client{Transport: &hostT},
	})
	defer h.Close()
	run := func(cfg SessionConfig) string {
		t.Helper()
		cfg.Provider, cfg.Model, cfg.CWD = "openai", "gpt-4.1", t.TempDir()
		s, err := h.NewSession(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := newCollector()
		if err := s.Submit(Work{Prompt: &PromptInput{Text: "hi"}, Sink: c.sink, Ctx: context.Background()}, Queue, nil); err != nil {
			t.Fatal(err)
		}
		c.waitDone(t)
		var text strings.Builder
		for _, ev := range c.events() {
			if d, ok := ev.(*wire.TextDeltaEvent); ok {
				text.WriteString(d.Delta)
			}
		}
		return text.String()
	}
	if got := run(SessionConfig{}); got != "hello" || hostT.n.Load() != 1 {
		t.Errorf("host's client: answer %q, %d requests through it, want 1", got, hostT.n.Load())
	}
	if got := run(SessionConfig{HTTPClient: &http.Client{Transport: &sessT}}); got != "hello" || sessT.n.Load() != 1 || hostT.n.Load() != 1 {
		t.Errorf("session's client: answer %q, %d requests through it and %d through the host's, want 1 and 1", got, sessT.n.Load(), hostT.n.Load())
	}
}

// HostConfig.SessionMiddleware is asked once per session, given it, and
// its model middleware wraps that session's calls, outside the session's
// own.
func TestSessionMiddlewareWrapsEachSession(t *testing.T) {
	srv := chatServer(t)
	var order []string
	var asked []*Session
	h := NewHost(HostConfig{
		Providers: map[string]ProviderSettings{"openai": {APIKey: "test-key", BaseURL: srv.URL}},
		SessionMiddleware: func(s *Session) ([]agent.ModelMiddleware, []agent.ToolMiddleware) {
			asked = append(asked, s)
			return []agent.ModelMiddleware{func(next agent.ModelFunc) agent.ModelFunc {
				return func(ctx context.Context, call agent.ModelCall, sink llm.Sink) (*llm.Response, error) {
					order = append(order, "host")
					return next(ctx, call, sink)
				}
			}}, nil
		},
	})
	defer h.Close()
	own := func(next agent.ModelFunc) agent.ModelFunc {
		return func(ctx context.Context, call agent.ModelCall, sink llm.Sink) (*llm.Response, error) {
			order = append(order, "session")
			return next(ctx, call, sink)
		}
	}
	s, err := h.NewSession(SessionConfig{Provider: "openai", Model: "gpt-4.1", CWD: t.TempDir(), ModelMiddleware: []agent.ModelMiddleware{own}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newCollector()
	if err := s.Submit(Work{Prompt: &PromptInput{Text: "hi"}, Sink: c.sink, Ctx: context.Background()}, Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	if len(asked) != 1 || asked[0] != s {
		t.Errorf("SessionMiddleware was asked for %v, want once for the session", asked)
	}
	if strings.Join(order, ",") != "host,session" {
		t.Errorf("the calls went through %v, want host then session", order)
	}
}

package gemini

import (
	"net/http/httptest"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/transport"
)

// testProvider returns a provider aimed at srv that never really sleeps.
func testProvider(srv *httptest.Server, sl *providertest.Sleeps) *Provider {
	return New(Config{APIKey: "test-key", BaseURL: srv.URL + "/v1beta", Options: transport.Options{Sleep: sl.Sleep}})
}

// dial is testProvider as a [providertest.Dial].
func dial(srv *httptest.Server, sl *providertest.Sleeps) llm.Provider { return testProvider(srv, sl) }

// idleDial dials a provider with a short idle timeout and no key.
func idleDial(srv *httptest.Server, sl *providertest.Sleeps) llm.Provider {
	return New(Config{BaseURL: srv.URL, Options: transport.Options{IdleTimeout: 100 * time.Millisecond, Sleep: sl.Sleep}})
}

// simpleRequest is a one-message request.
func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gemini-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}}
}

func transportOptions(sl *providertest.Sleeps, maxAttempts int) transport.Options {
	return transport.Options{Sleep: sl.Sleep, MaxAttempts: maxAttempts}
}

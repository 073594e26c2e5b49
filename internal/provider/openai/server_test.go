package openai

import (
	"net/http/httptest"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/provider/transport"
)

// testProvider returns a provider aimed at srv that never really sleeps.
func testProvider(srv *httptest.Server, sl *providertest.Sleeps) *Provider {
	return New(Config{APIKey: "test-key", BaseURL: srv.URL + "/v1", Options: transport.Options{Sleep: sl.Sleep}})
}

// dial is testProvider as a [providertest.Dial].
func dial(srv *httptest.Server, sl *providertest.Sleeps) llm.Provider { return testProvider(srv, sl) }

// simpleRequest is a one-message request.
func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gpt-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}}
}

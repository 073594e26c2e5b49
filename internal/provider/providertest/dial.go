package providertest

import (
	"net/http/httptest"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// TestKey is the API key the providers dialled by [Open.Dial] send.
const TestKey = "test-key"

// IdleTimeout is the stream idle timeout of the providers dialled by
// [Open.IdleDial]: short, so that a stall fails a test at once.
const IdleTimeout = 100 * time.Millisecond

// Open builds the provider under test aimed at baseURL, with apiKey (empty
// for none) and the httpcall options o. Each provider package's tests
// define one over their own Config, and the methods of Open turn it into
// the [Dial]s the shared scenarios take.
type Open func(baseURL, apiKey string, o httpcall.Options) llm.Provider

// Dial returns a Dial that aims the provider at the server's URL followed
// by path (the API version prefix a user would configure, such as "/v1"),
// with the key [TestKey] and its backoff sleeps recorded instead of slept.
func (open Open) Dial(path string) Dial {
	return func(srv *httptest.Server, sl *Sleeps) llm.Provider {
		return open(srv.URL+path, TestKey, httpcall.Options{Sleep: sl.Sleep})
	}
}

// IdleDial returns a Dial whose provider has no key and gives up on a
// stream that is silent for [IdleTimeout].
func (open Open) IdleDial() Dial {
	return func(srv *httptest.Server, sl *Sleeps) llm.Provider {
		return open(srv.URL, "", httpcall.Options{IdleTimeout: IdleTimeout, Sleep: sl.Sleep})
	}
}

// AttemptsDial returns a Dial whose provider has no key and makes at most
// n attempts of a call.
func (open Open) AttemptsDial(n int) Dial {
	return func(srv *httptest.Server, sl *Sleeps) llm.Provider {
		return open(srv.URL, "", httpcall.Options{Sleep: sl.Sleep, MaxAttempts: n})
	}
}

// SimpleRequest returns a request for model with one user message, "hi".
func SimpleRequest(model string) *llm.Request {
	return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}}
}

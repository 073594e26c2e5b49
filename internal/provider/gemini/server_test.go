package gemini

import (
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
)

// open builds the provider under test for providertest's dials.
func open(baseURL, apiKey string, o httpcall.Options) llm.Provider {
	return New(Config{APIKey: apiKey, BaseURL: baseURL, Options: o})
}

// dial aims the provider at a test server under /v1beta, with a key.
var dial = providertest.Open(open).Dial("/v1beta")

// idleDial dials a provider with a short idle timeout and no key.
var idleDial = providertest.Open(open).IdleDial()

// simpleRequest is a one-message request.
func simpleRequest() *llm.Request { return providertest.SimpleRequest("gemini-test") }

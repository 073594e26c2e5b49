// Package providertest holds the test helpers shared by zot's streaming
// providers (anthropic, openai, responses, gemini): a loopback server that
// replays testdata fixtures, recorders for backoff sleeps and sink events,
// hang guards, and failure-path scenarios that every provider must pass.
//
// It is imported only by the providers' _test.go files.
package providertest

// Package httpcall is the HTTP streaming core shared by zot's model
// providers: it posts a JSON request, retries the failures worth retrying
// with jittered exponential backoff, and reads the answer as a stream of
// Server-Sent Events with an idle timeout.
//
// A provider describes its model call as a [ModelCall] (how to post one
// attempt, and an [Assembler] that turns one attempt's events into llm
// events and a response) and makes it with [StreamModel], which posts with
// MaxAttempts 1 inside [Call]: an HTTP failure, a connect error and a
// retryable error event that arrives before any output all share one
// attempt budget and one backoff policy, and every provider reports
// llm.EventStart, partial answers and aborts alike.
package httpcall

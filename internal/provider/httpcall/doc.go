// Package httpcall is the HTTP streaming core shared by zot's model
// providers: it posts a JSON request, retries the failures worth retrying
// with jittered exponential backoff, and reads the answer as a stream of
// Server-Sent Events with an idle timeout.
//
// A provider typically wraps its whole call in [Retry] and calls [Post] with
// MaxAttempts set to 1 inside it, so that an HTTP failure, a connect error
// and a retryable error event that arrives before any output all share one
// attempt budget and one backoff policy.
package httpcall

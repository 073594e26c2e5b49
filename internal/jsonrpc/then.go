package jsonrpc

import "context"

// Then returns r that also calls after once r's answer is queued: on the
// connection's reader goroutine for an answer given at once (before the
// next message is read), on the job's goroutine for an Async one. What
// after sends (Conn.Notify) is written after the answer: a server tells
// about a session only once the client has its id. after is not called
// for a notification, which gets no answer.
func (r Reply) Then(after func()) Reply {
	r.then = after
	return r
}

// Await gives r's answer from inside an Async job that decided late what
// to answer: r's result or error as they are, or its job run with ctx. A
// Then of r is not called.
func (r Reply) Await(ctx context.Context) (any, error) {
	if r.run != nil {
		return r.run(ctx)
	}
	return r.result, r.err
}

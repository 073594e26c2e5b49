// Package jsonrpc speaks JSON-RPC 2.0 over a [Transport], which reads
// one message and writes whole messages: [NDJSON] over a byte stream
// (one message per line, lines split on LF only, package ndjson's
// reader with its line limit), [NewPipe] in memory, and any transport
// wrapped by [Tap] to show its traffic. It is the plumbing of zot's
// daemon door; the methods served (the Agent Client Protocol) live in
// the [Handler] a caller gives it.
//
// A [Conn] is one client. It owns three kinds of goroutines: one reader,
// which parses each message and hands it to the Handler in the order the
// messages arrived; one writer, which alone writes to the client from a
// bounded first-in first-out queue; and one goroutine per request the
// Handler answers later ([Async]). Everything a Conn sends (answers,
// notifications, its own requests to the client) goes through that one
// queue, so what was queued first is written first.
//
// Bad input never ends a connection: a message that is not JSON is
// answered with -32700 (id null), a JSON value that is not a request
// with -32600, a message over the transport's limit with -32600 (kind
// line_too_long) and skipped, and the reader goes on with the next one.
// Every error carries data.kind, a stable string, and data.retryable.
//
// Backpressure: the outgoing queue holds at most [Options.QueueFrames]
// frames and [Options.QueueBytes] bytes. A sender waits for room (until
// its context ends); a client that reads nothing while the queue is full
// for [Options.StallTimeout] is disconnected ([ErrStalled]), so it holds
// no memory and no sender for longer. Only the senders of that one
// connection ever wait. The writer hands the transport everything
// queued as one [Batch]; the transport tells of the client's progress
// within a batch ([Batch.Progress]: NDJSON writes at most 2 KiB at a
// time) and, on Linux, of the kernel's unread bytes for the client
// shrinking, so a client that reads slowly but steadily is never taken
// for one that stopped. [Conn.Hurry] shortens the stall timeout for a
// shutdown.
//
// Clients come from a [Listener], which yields Transports and their
// [Peer] (a Unix socket's streams through [NDJSONListener], later a
// WebSocket endpoint), served by [Serve]; or a Transport is served
// alone with [NewConn] (stdin and stdout). Dispatch is the same for
// all.
//
//	h := jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
//		switch req.Method {
//		case "echo":
//			return jsonrpc.Result(req.Params)
//		case "slow":
//			return jsonrpc.Async(func(ctx context.Context) (any, error) {
//				err := c.Notify(ctx, "progress", map[string]int{"done": 1})
//				return "ok", err
//			})
//		}
//		return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
//	})
//	c := jsonrpc.NewConn(jsonrpc.NDJSON(stream, 0), jsonrpc.Peer{Transport: "stdio"}, jsonrpc.Static(h), jsonrpc.Options{})
//	err := c.Wait()
package jsonrpc

// Package jsonrpc speaks JSON-RPC 2.0 over newline-delimited JSON: one
// message per line, lines split on LF only (package ndjson's reader,
// with its line limit). It is the plumbing of zot's daemon door; the
// methods served (the Agent Client Protocol) live in the [Handler] a
// caller gives it.
//
// A [Conn] is one client. It owns three kinds of goroutines: one reader,
// which parses each line and hands it to the Handler in the order the
// lines arrived; one writer, which alone writes to the client from a
// bounded first-in first-out queue; and one goroutine per request the
// Handler answers later ([Async]). Everything a Conn sends (answers,
// notifications, its own requests to the client) goes through that one
// queue, so what was queued first is written first.
//
// Bad input never ends a connection: a line that is not JSON is answered
// with -32700 (id null), a JSON value that is not a request with -32600,
// a line over the limit with -32600 (kind line_too_long) and skipped, and
// the reader goes on with the next line. Every error carries data.kind,
// a stable string, and data.retryable.
//
// Backpressure: the outgoing queue holds at most [Options.QueueFrames]
// frames and [Options.QueueBytes] bytes. A sender waits for room (until
// its context ends); a client that reads nothing while the queue is full
// for [Options.StallTimeout] is disconnected ([ErrStalled]), so it holds
// no memory and no sender for longer. Only the senders of that one
// connection ever wait. Reading is counted by the byte: the writer
// writes at most 2 KiB at a time and, on Linux, watches the kernel's
// unread bytes for the client shrink, so a client that reads slowly but
// steadily is never taken for one that stopped. [Conn.Hurry] shortens
// the stall timeout for a shutdown.
//
// Transports sit behind [Listener]: anything that yields an
// io.ReadWriteCloser and a [Peer] (a Unix socket, stdin and stdout, a
// WebSocket) is served by [Serve] or [NewConn] with the same dispatch.
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
//	c := jsonrpc.NewConn(stream, jsonrpc.Peer{Transport: "stdio"}, jsonrpc.Static(h), jsonrpc.Options{})
//	err := c.Wait()
package jsonrpc

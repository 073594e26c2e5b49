package jsonrpc_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"

	"zot.dev/zot/internal/jsonrpc"
)

// A Conn over an in-memory pipe: a request answered at once, one answered
// by a job after a notification, and a line that is not JSON.
func ExampleNewConn() {
	server, client := net.Pipe()
	h := jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
		switch req.Method {
		case "echo":
			return jsonrpc.Result(req.Params)
		case "work":
			return jsonrpc.Async(func(ctx context.Context) (any, error) {
				if err := c.Notify(ctx, "progress", map[string]int{"percent": 100}); err != nil {
					return nil, err
				}
				return "done", nil
			})
		}
		return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
	})
	conn := jsonrpc.NewConn(jsonrpc.NDJSON(server, 0), jsonrpc.Peer{Transport: "pipe"}, jsonrpc.Static(h), jsonrpc.Options{})

	r := bufio.NewReader(client)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":["hi"]}`,
		`{"jsonrpc":"2.0","id":2,"method":"work"}`,
		`not json`,
	} {
		_, _ = io.WriteString(client, line+"\n")
		for {
			out, _ := r.ReadString('\n')
			fmt.Print(out)
			if out[:len(`{"jsonrpc":"2.0","id"`)] == `{"jsonrpc":"2.0","id"` {
				break // the answer; a notification comes before it
			}
		}
	}
	client.Close()
	fmt.Println(conn.Wait())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":["hi"]}
	// {"jsonrpc":"2.0","method":"progress","params":{"percent":100}}
	// {"jsonrpc":"2.0","id":2,"result":"done"}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the line is not JSON: invalid character 'o' in literal null (expecting 'u')","data":{"kind":"malformed_json","retryable":false}}}
	// <nil>
}

// Two Conns in one process over an in-memory pipe, the client's end
// tapped: the tap sees each message the client wrote and read.
func ExampleTap() {
	a, b := jsonrpc.NewPipe()
	echo := jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
		return jsonrpc.Result(req.Params)
	})
	server := jsonrpc.NewConn(a, jsonrpc.Peer{Transport: "memory"}, jsonrpc.Static(echo), jsonrpc.Options{})

	rec := &jsonrpc.Recorder{Max: 100}
	client := jsonrpc.NewConn(jsonrpc.Tap(b, rec.Record), jsonrpc.Peer{Transport: "memory"}, jsonrpc.Static(echo), jsonrpc.Options{})
	res, err := client.Call(context.Background(), "echo", []string{"hi"})
	fmt.Println(string(res), err)
	_ = client.Close()
	_ = client.Wait()
	_ = server.Wait()

	traffic, _ := rec.Traffic()
	for _, tr := range traffic {
		fmt.Println(tr.Dir, string(tr.Message))
	}
	// Output:
	// ["hi"] <nil>
	// out {"jsonrpc":"2.0","id":"zot-1","method":"echo","params":["hi"]}
	// in {"jsonrpc":"2.0","id":"zot-1","result":["hi"]}
}

// Command mcpserver is an MCP server for zot's tests, written with the
// official Go SDK. Its tools exercise every kind of result zot maps and
// every way a server can misbehave:
//
//	echo      text back
//	add       structured content (and the same as text)
//	image     a PNG image
//	resource  an embedded text resource
//	fail      a result with isError set
//	slow      progress notifications, then text after ms milliseconds;
//	          a cancelled call writes "cancelled" to -cancel-file
//	crash     the process exits in the middle of the call
//	grow      adds the tool "extra", so the server says its tools changed
//	big       text of the given number of bytes
//	broken    prints a line that starts like JSON but is not, then answers
//
// -chatty prints a banner on stdout before serving and adds the tool
// chat, which prints a log line on stdout before it answers, as careless
// servers do.
//
// -wordy N adds the tool wordy, whose description is N bytes.
//
// -bad-schemas adds tools whose input schemas providers reject at the top
// of a tool's parameters (a string type, a top-level oneOf, null
// properties, a required that is not a list of names), as hostile or
// careless servers send them.
//
// -flood prints lines that are not JSON-RPC on stdout without end once
// its tools are listed, as a broken server can; -flood-notifications
// sends valid notifications (notifications/message) the same way.
//
// -mode stdio (default) serves on stdin/stdout; -mode http serves
// streamable HTTP on -addr and prints its URL on stdout; -mode sse serves
// the legacy HTTP+SSE transport the same way; -mode hang reads
// stdin and never answers; -mode garbage answers every line with text
// that is not JSON-RPC; -mode brokeninit answers initialize with a line
// that starts like JSON but ends before its object does.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// onePixelPNG is a 1×1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

func main() {
	mode := flag.String("mode", "stdio", "stdio, http, sse, hang or garbage")
	addr := flag.String("addr", "127.0.0.1:0", "with -mode http: where to listen")
	cancelFile := flag.String("cancel-file", "", "where a cancelled slow call says so")
	name := flag.String("name", "testserver", "the server's name in initialize")
	badSchemas := flag.Bool("bad-schemas", false, "add tools with input schemas providers reject")
	wordy := flag.Int("wordy", 0, "add the tool wordy, whose description is this many bytes")
	floodOut := flag.Bool("flood", false, "print lines that are not JSON-RPC on stdout without end once the tools are listed")
	floodNotes := flag.Bool("flood-notifications", false, "send valid notifications without end once the tools are listed")
	echoTrace := flag.Bool("echo-trace", false, "echo adds the traceparent of the call's _meta to its answer")
	chatty := flag.Bool("chatty", false, "print a banner on stdout, and a log line before each answer of the tool chat")
	flag.Parse()
	traceEcho = *echoTrace
	switch *mode {
	case "hang":
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		return
	case "garbage":
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("this is not JSON-RPC {{{")
		}
		return
	case "brokeninit":
		sc := bufio.NewScanner(os.Stdin)
		if sc.Scan() {
			fmt.Println(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{`)
		}
		for sc.Scan() {
		}
		return
	}
	server := newServer(*name, *cancelFile)
	if *badSchemas {
		addBadSchemas(server)
	}
	if *chatty {
		fmt.Println("mcpserver starting up, version 1.2.3")
		server.AddTool(&mcp.Tool{Name: "chat", Description: "Prints a log line on stdout, then answers.", InputSchema: objectSchema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				fmt.Println("INFO handling chat")
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "chatted"}}}, nil
			})
	}
	if *floodOut || *floodNotes {
		line := []byte("not json, and never ending\n")
		if *floodNotes {
			line = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"again"}}` + "\n")
		}
		var flooding atomic.Bool
		// Once initialized; one write(2) a line, so that a line never
		// lands inside a message the SDK writes.
		server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" && !flooding.Swap(true) {
					go func() {
						for {
							if _, err := os.Stdout.Write(line); err != nil {
								return
							}
						}
					}()
				}
				return next(ctx, method, req)
			}
		})
	}
	if *wordy > 0 {
		server.AddTool(&mcp.Tool{Name: "wordy", Description: strings.Repeat("é", *wordy/2), InputSchema: objectSchema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "said"}}}, nil
			})
	}
	switch *mode {
	case "stdio":
		if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "mcpserver:", err)
			os.Exit(1)
		}
	case "http", "sse":
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpserver:", err)
			os.Exit(1)
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		var handler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		if *mode == "sse" {
			handler = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", handler)
		if err := http.Serve(ln, mux); err != nil {
			fmt.Fprintln(os.Stderr, "mcpserver:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "mcpserver: unknown mode", *mode)
		os.Exit(2)
	}
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

// traceEcho is -echo-trace.
var traceEcho bool

func newServer(name, cancelFile string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.2.3"}, nil)
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Says the text back.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"text":{"type":"string","description":"what to say"}},"required":["text"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if traceEcho {
				tp, _ := req.Params.Meta["traceparent"].(string)
				return text(fmt.Sprint("echo: ", args(req)["text"], " traceparent=", tp)), nil
			}
			return text(fmt.Sprint("echo: ", args(req)["text"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "add", Description: "Adds a and b.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := args(req)
			x, _ := a["a"].(float64)
			y, _ := a["b"].(float64)
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("the sum is %g", x+y)}},
				StructuredContent: map[string]any{"sum": x + y},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "image", Description: "Returns a tiny image.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data, _ := base64.StdEncoding.DecodeString(onePixelPNG)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: data, MIMEType: "image/png"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "resource", Description: "Returns an embedded resource.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed as asked"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Reports progress, then answers after ms milliseconds.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"ms":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms, _ := args(req)["ms"].(float64)
			token := req.Params.GetProgressToken()
			end := time.Now().Add(time.Duration(ms) * time.Millisecond)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for i := 1; ; i++ {
				if token != nil && i <= 3 {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
				}
				if time.Now().After(end) {
					return text("slow done"), nil
				}
				select {
				case <-ctx.Done():
					if cancelFile != "" {
						_ = os.WriteFile(cancelFile, []byte("cancelled"), 0o644)
					}
					return nil, ctx.Err()
				case <-tick.C:
				}
			}
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exits in the middle of the call.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "crashing as asked")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "Returns text of the given number of bytes.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, _ := args(req)["bytes"].(float64)
			return text(strings.Repeat("é", int(n)/2) + strings.Repeat("x", int(n)%2)), nil
		})
	s.AddTool(&mcp.Tool{Name: "broken", Description: "Prints a line that starts like JSON but is not, then answers.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":`)
			return text("said something broken"), nil
		})
	s.AddTool(&mcp.Tool{Name: "grow", Description: "Adds the tool extra.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(&mcp.Tool{Name: "extra", Description: "Added later.", InputSchema: objectSchema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("extra!"), nil })
			return text("grown"), nil
		})
	return s
}

// badSchemas are input schemas providers reject at the top of a tool's
// parameters, by tool name. The SDK's server refuses to add them, so the
// tools are added with an object schema and tools/list answers with
// these.
var badSchemas = map[string]string{
	"bad_string":    `{"type":"string","description":"a bare string"}`,
	"bad_oneof":     `{"type":"object","oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"integer"}}}]}`,
	"bad_nullprops": `{"type":"object","properties":null}`,
	"bad_required":  `{"type":["object","null"],"properties":{"x":{"type":"string"}},"required":"x"}`,
}

func addBadSchemas(s *mcp.Server) {
	for name := range badSchemas {
		s.AddTool(&mcp.Tool{Name: name, Description: "A tool with a schema providers reject.", InputSchema: objectSchema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " called"}}}, nil
			})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok {
				return res, err
			}
			out := *list
			out.Tools = make([]*mcp.Tool, len(list.Tools))
			for i, t := range list.Tools {
				c := *t
				if schema, bad := badSchemas[t.Name]; bad {
					c.InputSchema = json.RawMessage(schema)
				}
				out.Tools[i] = &c
			}
			return &out, nil
		}
	})
}

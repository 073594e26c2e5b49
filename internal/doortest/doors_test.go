package doortest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"zot.dev/zot/internal/acpserver"
	"zot.dev/zot/internal/duplex"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/rpcserver"
	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

func TestMain(m *testing.M) {
	// Nothing here may touch the real home.
	home, err := os.MkdirTemp("", "zot-doortest-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("ZOT_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// extDir is the test extension's folder.
func extDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "ext"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// echoMCP serves, on loopback, a streamable HTTP MCP server named "echo"
// with one tool, echo, and returns the server as a session names it.
func echoMCP(t *testing.T) engine.MCPServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "echoer", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Says the text back.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "mcp echo: " + args.Text}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		// The client's event stream may still be open: Close would wait
		// for it.
		hs.CloseClientConnections()
		hs.Close()
	})
	return engine.MCPServer{Name: "echo", URL: hs.URL}
}

// extConfig is the configuration of a session's extensions that runs
// the test extension.
func extConfig(t *testing.T) engine.ExtensionConfig {
	return engine.ExtensionConfig{Paths: []string{extDir(t)}}
}

// testLog collects a door's diagnostics and shows them when the test
// fails.
type testLog struct {
	mu sync.Mutex
	b  []byte
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func newTestLog(t *testing.T) *testLog {
	l := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Logf("the door's log:\n%s", l.b)
		}
	})
	return l
}

// newHost is a Host whose scripted provider plays dir/script.json, or,
// with o.baseURL, whose anthropic provider is served there.
func newHost(t *testing.T, dir string, o doorOptions) *engine.Host {
	providers := map[string]engine.ProviderSettings{"scripted": {Script: filepath.Join(dir, "script.json")}}
	if o.baseURL != "" {
		providers["anthropic"] = engine.ProviderSettings{BaseURL: o.baseURL, APIKey: "test-key"}
	}
	host := engine.NewHost(engine.HostConfig{Providers: providers})
	t.Cleanup(func() { host.Close() })
	return host
}

// provider is the provider of the door's sessions.
func (o doorOptions) provider() string {
	if o.baseURL != "" {
		return "anthropic"
	}
	return "scripted"
}

// startRPC serves zot rpc over an in-memory pair: one Session in dir, its
// extensions when o.ext, answering approvals through the client when
// o.approve. Every frame the server writes is checked against the schema.
func startRPC(t *testing.T, dir string, o doorOptions) *door {
	t.Helper()
	log := newTestLog(t)
	host := newHost(t, dir, o)
	cfg := engine.SessionConfig{Provider: o.provider(), CWD: dir, AnswerApprovals: o.approve, Log: log, DeferStart: true}
	if o.ext {
		cfg.Extensions = extConfig(t)
	}
	if o.mcp {
		cfg.MCPServers = []engine.MCPServer{echoMCP(t)}
	}
	sess, err := host.NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := rpcserver.New(sess, rpcserver.Options{Log: log})
	client, server := duplex.Pair()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		err := srv.Serve(ctx, server, server)
		server.CloseWrite()
		served <- err
	}()
	t.Cleanup(func() {
		cancel()
		client.Close()
		if err := <-served; err != nil && err != context.Canceled {
			t.Errorf("Serve: %v", err)
		}
	})
	return &door{
		conn: newFrameConn(t, client),
		dir:  dir,
		check: func(fromClient bool, frame []byte) error {
			if fromClient {
				return wire.ValidateCommand(frame)
			}
			return wire.ValidateFrame(frame)
		},
	}
}

// startACP serves the Agent Client Protocol over an in-memory pair, as
// zot daemon serves one connection: sessions open in dir with policy
// o.permission and, when o.ext, the test extension. Every frame both ways
// is checked against ACP's schema.
func startACP(t *testing.T, dir string, o doorOptions) *door {
	t.Helper()
	log := newTestLog(t)
	host := newHost(t, dir, o)
	defaults := engine.SessionConfig{Provider: o.provider()}
	if o.ext {
		defaults.Extensions = extConfig(t)
	}
	if o.mcp {
		// Every session of the agent gets the server, as if each
		// session/new had named it.
		defaults.MCPServers = []engine.MCPServer{echoMCP(t)}
	}
	opts := acpserver.Options{
		Host:        host,
		Defaults:    defaults,
		Permission:  o.permission,
		SessionsDir: filepath.Join(t.TempDir(), "sessions"),
		Version:     "test",
		Log:         log,
	}
	a, err := acpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	client, server := duplex.Pair()
	conn := jsonrpc.NewConn(jsonrpc.NDJSON(server, 0), jsonrpc.Peer{Transport: "test", Label: "doortest"}, a.Handler, jsonrpc.Options{Log: log})
	conv := &schemacheck.ACPConversation{}
	t.Cleanup(func() {
		conn.Close()
		conn.Wait()
		client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("closing the agent: %v", err)
		}
		if err := conv.Err(); err != nil {
			t.Error(err)
		}
	})
	return &door{
		conn: newFrameConn(t, client),
		dir:  dir,
		check: func(fromClient bool, frame []byte) error {
			conv.Frame(fromClient, frame)
			return nil
		},
		skip: func(frame []byte) { conv.Skip(true, frame) },
	}
}

// TestRPCTranscripts replays testdata/rpc through zot rpc's server.
func TestRPCTranscripts(t *testing.T) { replayAll(t, "rpc", startRPC) }

// TestACPTranscripts replays testdata/acp through the ACP agent.
func TestACPTranscripts(t *testing.T) { replayAll(t, "acp", startACP) }

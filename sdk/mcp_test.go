package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// testMCPServer builds the Go test MCP server of package mcphost.
func testMCPServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, "../internal/mcphost/testdata/mcpserver").CombinedOutput()
	if err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	return bin
}

func TestMCPServersInTheSDK(t *testing.T) {
	bin := testMCPServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers":{"fromfile":{"command":`+quote(bin)+`}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := newScripted(t, `{"turns":[{"steps":[
		{"tool_calls":[{"id":"a","name":"mcp__t__echo","args":{"text":"sdk"}},{"id":"b","name":"mcp__fromfile__add","args":{"a":2,"b":3}}]},
		{"text":"ok"}]}]}`, Config{
		MCPServers: []MCPServer{{Name: "t", Command: bin}},
		MCP:        MCPOptions{Files: []string{file}},
	})
	ch, err := rt.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ev := range drain(t, ch) {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			data, _ := json.Marshal(r.Content)
			got[r.ID] = string(data)
		}
	}
	if !strings.Contains(got["a"], "echo: sdk") || !strings.Contains(got["b"], `{\"sum\":5}`) {
		t.Fatalf("results = %v", got)
	}
	if st := must(rt.State(context.Background())); st.McpServers == nil || *st.McpServers != 2 {
		t.Fatalf("state = %+v", st)
	}

	if err := rt.AddMCPServers(context.Background(), MCPServer{Name: "more", Command: bin}); err != nil {
		t.Fatal(err)
	}
	rt.WaitMCP(context.Background())
	list := must(rt.MCPServers(context.Background()))
	if len(list) != 3 || list[1].Name != "more" || list[1].Status != "ready" || len(list[1].Tools) == 0 {
		t.Fatalf("servers = %+v", list)
	}
	if err := rt.RemoveMCPServer(context.Background(), "more"); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveMCPServer(context.Background(), "more"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}
	if err := rt.AddMCPServers(context.Background(), MCPServer{Name: "bad"}); err == nil {
		t.Fatal("a server without command or url was accepted")
	}
	rt.Close()
	if err := rt.AddMCPServers(context.Background(), MCPServer{Name: "late", Command: bin}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestRuntimeWithoutMCPServers(t *testing.T) {
	rt := newScripted(t, "", Config{})
	if list := must(rt.MCPServers(context.Background())); len(list) != 0 {
		t.Fatalf("servers = %+v", list)
	}
	if st := must(rt.State(context.Background())); st.McpServers != nil {
		t.Fatalf("state counts servers: %+v", st)
	}
	if err := rt.RemoveMCPServer(context.Background(), "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove = %v", err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

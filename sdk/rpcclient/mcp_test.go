package rpcclient

import (
	"os/exec"
	"path/filepath"
	"testing"

	"zot.dev/zot/sdk/wire"
)

func TestMCPServers(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcpserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../internal/mcphost/testdata/mcpserver").CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	c := startZot(t, nil)
	list, err := c.MCPServers(ctx(t))
	if err != nil || len(list) != 0 {
		t.Fatalf("servers at start: %+v, %v", list, err)
	}
	if err := c.AddMCPServers(ctx(t), wire.MCPServer{Name: "t", Command: bin}); err != nil {
		t.Fatal(err)
	}
	// A prompt waits for the server to start.
	collect(t, must(c.PromptStream(ctx(t), "hi", nil)))
	list, err = c.MCPServers(ctx(t))
	if err != nil || len(list) != 1 || list[0].Name != "t" || list[0].Status != "ready" {
		t.Fatalf("servers after adding: %+v, %v", list, err)
	}
	err = c.AddMCPServers(ctx(t), wire.MCPServer{Name: "bad"})
	wantCode(t, err, wire.CodeInvalidParams, "mcp_add")
	if err := c.RemoveMCPServer(ctx(t), "t"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.RemoveMCPServer(ctx(t), "t"), wire.CodeNotFound, "mcp_remove")
}

// must returns v, panicking on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

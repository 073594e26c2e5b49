package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSpawnToPingMCP times `zot rpc` from its start to the answer
// of its first ping, with no MCP server and with three stdio servers in
// the project's .zot/mcp.json (the Go test server of package mcphost),
// alternately, so that the machine's load weighs on both alike. Servers
// start in the background: the ping must not wait for them.
func BenchmarkSpawnToPingMCP(b *testing.B) {
	server := filepath.Join(b.TempDir(), "mcpserver")
	if out, err := exec.Command("go", "build", "-o", server, "../../internal/mcphost/testdata/mcpserver").CombinedOutput(); err != nil {
		b.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	bare, withMCP := b.TempDir(), b.TempDir()
	os.MkdirAll(filepath.Join(withMCP, ".zot"), 0o755)
	servers := map[string]any{}
	for _, name := range []string{"one", "two", "three"} {
		servers[name] = map[string]any{"command": server}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(withMCP, ".zot", "mcp.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	benchSpawnToPing(b, bare, withMCP, "three")
}

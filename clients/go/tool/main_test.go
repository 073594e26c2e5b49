package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the tests.
var zotBin string

func TestMain(m *testing.M) {
	if os.Getenv("ZOT_TOOL_EXAMPLE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(zotbin.Main(m, &zotBin, false))
}

// TestToolExample runs the program (this test binary, as main) against
// zot rpc: the scripted model calls the Go function, and its answer is
// printed.
func TestToolExample(t *testing.T) {
	dir := t.TempDir()
	script, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "weather", "args": map[string]any{"City": "Oslo"}}}},
		map[string]any{"text": "It is foggy in Oslo."},
	}}}})
	file := filepath.Join(dir, "script.json")
	if err := os.WriteFile(file, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--provider", "scripted", "--script", file, "--cwd", dir, "weather in Oslo?")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZOTCORE_RPC_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ZOT_TOOL_EXAMPLE=1", "ZOT_BIN="+zotBin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if string(out) != "It is foggy in Oslo.\n" {
		t.Errorf("stdout %q", out)
	}
}

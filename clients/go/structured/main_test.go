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
	if os.Getenv("ZOT_STRUCTURED_EXAMPLE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(zotbin.Main(m, &zotBin, false))
}

// TestStructuredExample runs the program (this test binary, as main)
// against zot rpc: the scripted model's first answer is prose, the
// corrective turn's is JSON, and the program prints the parsed value and
// the record of the two turns.
func TestStructuredExample(t *testing.T) {
	dir := t.TempDir()
	script, _ := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "Paris, about two million.", "usage": map[string]any{"input": 20, "output": 8}}}},
		map[string]any{"steps": []any{map[string]any{"text": `{"city": "Paris", "population": 2100000}`, "usage": map[string]any{"input": 40, "output": 12}}}},
	}})
	file := filepath.Join(dir, "script.json")
	if err := os.WriteFile(file, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--provider", "scripted", "--script", file, "--cwd", dir, "capital of France?")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZOTCORE_RPC_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ZOT_STRUCTURED_EXAMPLE=1", "ZOT_BIN="+zotBin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if string(out) != `{"city":"Paris","population":2100000}`+"\n" {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(stderr.String(), "end_turn: 2 turns, 0 tool calls, 60+20 tokens") {
		t.Errorf("stderr %q", stderr.String())
	}
}

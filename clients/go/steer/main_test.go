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
	if os.Getenv("ZOT_STEER_EXAMPLE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(zotbin.Main(m, &zotBin, false))
}

// TestSteerExample runs the program (this test binary, as main) against
// zot rpc: the steer sent while the model answers lands in the running
// prompt, and the model's last answer is to it.
func TestSteerExample(t *testing.T) {
	dir := t.TempDir()
	script, _ := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "working on it", "chunk": 2, "delay_ms": 100}}},
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
	file := filepath.Join(dir, "script.json")
	if err := os.WriteFile(file, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--provider", "scripted", "--script", file, "--cwd", dir, "fix the build", "use make")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZOTCORE_RPC_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ZOT_STEER_EXAMPLE=1", "ZOT_BIN="+zotBin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "[steer] use make") {
		t.Errorf("stderr %q", stderr.String())
	}
	if string(out) != "You said: use make\n" {
		t.Errorf("stdout %q", out)
	}
}

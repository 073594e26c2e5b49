package rpcclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the tests.
var zotBin string

// fakeEnv makes the test binary act as a fake `zot rpc` (see fake_test.go).
const fakeEnv = "ZOT_RPCCLIENT_FAKE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		os.Exit(fakeServer(os.Stdin, os.Stdout))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if p := os.Getenv("ZOT_BIN"); p != "" {
		zotBin = p
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "zot-rpcclient-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	zotBin = filepath.Join(dir, "zot")
	build := exec.Command("go", "build", "-o", zotBin, "zot.dev/zot/cmd/zot")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zot:", err)
		return 1
	}
	return m.Run()
}

// hangGuard bounds every wait; it only catches hangs, it times nothing.
const hangGuard = 60 * time.Second

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cleanEnv is this process's environment without the rpc token or provider
// keys, so the host cannot change what is tested.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "ZOTCORE_RPC_TOKEN" || strings.HasSuffix(k, "_API_KEY") || k == fakeEnv {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// writeScript writes a scripted-provider script and returns its path.
func writeScript(t *testing.T, script any) string {
	t.Helper()
	data, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

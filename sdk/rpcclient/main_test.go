package rpcclient

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the tests.
var zotBin string

// fakeEnv makes the test binary act as a fake `zot rpc` (see fake_test.go):
// "1" a newer server, "exit" one that exits in the middle of a prompt.
const fakeEnv = "ZOT_RPCCLIENT_FAKE_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(os.Stdin, os.Stdout, mode))
	}
	// Every zot the tests start inherits a scratch zot home (a test may
	// still give its own in Options.Env): no test touches the user's.
	home, err := os.MkdirTemp("", "zot-rpcclient-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("ZOT_HOME", home)
	code := zotbin.Main(m, &zotBin, false)
	os.RemoveAll(home)
	os.Exit(code)
}

// hangGuard bounds every wait; it only catches hangs, it times nothing.
const hangGuard = 60 * time.Second

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
func writeScript(t testing.TB, script any) string {
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

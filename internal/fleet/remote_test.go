package fleet

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/internal/tools"
)

// TestBuiltinNames holds the tools a worker runs to zot's built-in ones.
func TestBuiltinNames(t *testing.T) {
	all := tools.Builtins(tools.Config{CWD: t.TempDir()})
	if len(all) != len(builtin) {
		t.Errorf("%d built-in tools, the fleet names %d", len(all), len(builtin))
	}
	for _, tool := range all {
		if !builtin[tool.Name()] {
			t.Errorf("built-in tool %s is not among those a worker runs", tool.Name())
		}
	}
}

// TestClientFrameTooLong: a client that writes a frame too long to read
// (over ndjson's limit) is ended, with a reason that says so, instead of
// being left running while the turns it holds wait for frames that never
// come; the next prompt starts another.
func TestClientFrameTooLong(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script := filepath.Join(t.TempDir(), "client.sh")
	body := "#!/bin/sh\nprintf '{\"type\":\"ready\"}\\n'\nhead -c " + strconv.Itoa(ndjson.DefaultMaxLine+10) + " /dev/zero | tr '\\0' a\necho\nexec sleep 600\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := Start(script, nil, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
	r.mu.Lock()
	p := r.cur
	r.mu.Unlock()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the client that wrote a frame too long to read was left running")
	}
	if err := p.gone(); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("the client is gone because %v; want the frame too long", err)
	}
}

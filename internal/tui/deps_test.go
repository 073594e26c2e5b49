package tui

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportsNoEngine: the terminal client reaches the engine only over
// ACP. Every zot package linked into internal/tui/... is the client's
// own, the generated ACP types, the JSON-RPC plumbing, or one of the
// small packages those two use: never the engine, the agent, the
// extension host, a server or a provider.
func TestImportsNoEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	list := func(args ...string) []string {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	// What internal/acp and internal/jsonrpc bring with them.
	allowed := list("zot.dev/zot/internal/acp", "zot.dev/zot/internal/jsonrpc")
	for _, p := range list("zot.dev/zot/internal/tui/...") {
		if !strings.HasPrefix(p, "zot.dev/") || strings.HasPrefix(p, "zot.dev/zot/internal/tui") || slices.Contains(allowed, p) {
			continue
		}
		t.Errorf("internal/tui links %s: the terminal client may use only internal/acp and internal/jsonrpc of zot (and what they import); the rest is reached over ACP", p)
	}
}

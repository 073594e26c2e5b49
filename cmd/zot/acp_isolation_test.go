package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two clients have one session open and one of them stops reading: the
// other's prompt streams its whole answer at once, instead of waiting
// for the stuck client to be dropped after the stall timeout (5 minutes
// here); the stuck client is dropped alone, once it is far behind, and
// the daemon keeps serving.
func TestDaemonStuckClientDoesNotDelayTheOthersOfItsSession(t *testing.T) {
	const size = 8 << 20 // far more than a queue and the kernel hold
	home := doorDir(t)
	d := startZotDaemon(t, doorEnv(home), "--script", writeScript(t, t.TempDir(), size, 1024, 0), "--client-stall-timeout", "5m")
	d.waitFor(t, "listening on")
	dial := func() *throttledPeer {
		conn, err := net.Dial("unix", filepath.Join(home, "daemon.sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		p := newThrottledPeer(t, conn)
		if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
			t.Fatalf("initialize: %s", f.raw)
		}
		return p
	}
	a := dial()
	f, _ := a.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home), "")
	id := sessionID(t, f)
	b := dial()
	if f, _ := b.call("2", "session/resume", fmt.Sprintf(`{"sessionId":%q,"cwd":%q}`, id, home), ""); f.Error != nil {
		t.Fatalf("session/resume: %s", f.raw)
	}
	b.setRate(1) // from now on, next to nothing

	start := time.Now()
	a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	// await fails the test when no frame comes for a while: before the
	// clients of a session had queues of their own, none came until the
	// stuck one was let go.
	ans, before := a.await("3", "")
	t.Logf("answered in %v", time.Since(start).Round(time.Millisecond))
	if ans.Error != nil {
		t.Fatalf("answer: %s", ans.raw)
	}
	if got := textOf(before); got != size {
		t.Errorf("got %d bytes of text, want %d", got, size)
	}
	if !strings.Contains(d.stderr.String(), "stopped reading") {
		t.Errorf("the stuck client was not let go:\n%s", d.stderr)
	}
	// The daemon serves on, and the client that reads keeps its session.
	if f, _ := a.call("4", "_zot/status", `{}`, ""); f.Error != nil {
		t.Fatalf("status after: %s", f.raw)
	}
}

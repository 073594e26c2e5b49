package main

// Requests an editor sends that zot cannot serve as they stand, through
// the real binary: each is answered with the error that says whose the
// problem is.

import (
	"fmt"
	"path/filepath"
	"testing"
)

// A compaction of a transcript too short to compact is the client's
// request to change (invalid_params), not a fault inside zot (internal).
func TestACPDaemonCompactWithNothingToCompact(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "s")
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock), "--script", writeScript(t, dir, 10, 4, 0))
	d.waitFor(t, "listening on")
	p := initialized(t, sock)
	id := sessionID(t, first(p.call("1", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")))
	if f, _ := p.call("2", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), ""); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	f, _ := p.call("3", "_zot/session/compact", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["kind"] != "invalid_params" || f.Error.Data["sessionId"] != id {
		t.Fatalf("compact of a two-message transcript: %s, want -32602 invalid_params naming the session", f.raw)
	}
	// The session goes on.
	if f, _ := p.call("4", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}`, id), ""); f.Error != nil {
		t.Errorf("prompt after the refused compaction: %s", f.raw)
	}
}

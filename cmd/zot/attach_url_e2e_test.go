//go:build tuie2e

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttachURL: zot attach ws://… opens the terminal client on a
// daemon's --listen endpoint with a token; a connection cut mid-answer
// is made again and the answer goes on to its end; a wrong token is
// refused with a clear message.
func TestAttachURL(t *testing.T) {
	dir := doorDir(t)
	slow := slowWords(40)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "First answer over the network."}}},
		map[string]any{"steps": []any{map[string]any{"text": slow, "chunk": 4, "delay_ms": 60}}},
		map[string]any{"steps": []any{map[string]any{"text": "Still here after the drop."}}},
	}})
	d, url := startRemote(t, dir, "--script", s, "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir))
	proxy := startCutProxy(t, hostOf(t, url))
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeFile(t, tokenFile, remoteAlice+"\n")
	home := filepath.Join(dir, "home")

	bad := openTerm(t, termOpts{w: 100, h: 24, home: home}, "attach", proxy.url(), "--token", "wrong-0123456789abcdef0123")
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(bad.scrollback(), "[zot exited 1]") {
		if time.Now().After(deadline) {
			t.Fatalf("a wrong token: zot did not exit 1:\n%s", bad.scrollback())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(bad.scrollback(), "refused the token") {
		t.Errorf("a wrong token: not said:\n%s", bad.scrollback())
	}

	tm := openTerm(t, termOpts{w: 100, h: 30, home: home}, "attach", proxy.url(), "--token-file", tokenFile)
	tm.waitFor("scripted")
	tm.prompt("hello from afar")
	tm.waitFor("First answer over the network.")
	tm.prompt("a long one")
	tm.waitFor("w04")
	proxy.cut()
	tm.waitScrollback("THE END")
	// The turn's answer went to the lost connection: the client is told
	// the turn ended while it was away, and goes on.
	tm.waitFor("the session was resumed")
	if strings.Contains(tm.scrollback(), "connection to the agent ended") {
		t.Fatalf("the client gave up on its connection:\n%s", tm.scrollback())
	}
	tm.prompt("still there?")
	tm.waitFor("Still here after the drop.")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, tm.scrollback())
	}
	if !d.running() {
		t.Fatalf("the daemon exited:\n%s", d.stderr)
	}
}

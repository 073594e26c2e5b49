package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A session's answer comes before any update of it, as ACP orders them:
// an extension's notices (_zot/notify) and the commands update that come
// while a client opens the session — here while session/load replays a
// long history — reach the client after the load's answer, not before,
// and are not lost. The extension, in the zot home (trusted in any
// folder), says its notices as soon as it is ready; the load is repeated,
// as the order once depended on which of two goroutines ran first.
func TestACPSessionAnswerPrecedesItsUpdates(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	ext := filepath.Join(home, "extensions", "chatty")
	script := filepath.Join(ext, "run.sh")
	writeExt(t, ext, fmt.Sprintf(`{"name":"chatty","exec":"/bin/sh","args":[%q]}`, script), map[string]string{
		"run.sh": `printf '%s\n' '{"type":"hello","name":"chatty","version":"1"}' '{"type":"register_command","name":"chat","description":"chat"}' '{"type":"ready"}'
for i in 1 2 3 4 5; do printf '{"type":"notify","level":"info","message":"chatty says %s"}\n' "$i"; sleep 0.02; done
exec cat >/dev/null
`,
	})
	id := writeStoredSession(t, home, work, 12, 1<<20)
	for round := range 2 {
		a := startACPProc(t, home, "--provider", "scripted")
		p := a.peer
		if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
			t.Fatalf("initialize: %s", f.raw)
		}
		f, before := p.call("2", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, work), "")
		if f.Error != nil {
			t.Fatalf("session/load: %s", f.raw)
		}
		for _, b := range before {
			if b.Method == "_zot/notify" || strings.Contains(b.raw, `"available_commands_update"`) {
				t.Fatalf("round %d: before the session/load answer came %.200s", round, b.raw)
			}
		}
		// After it: every notice, and the commands with the extension's.
		notices, chat := 0, false
		for notices < 5 || !chat {
			f := p.next()
			switch {
			case f.Method == "_zot/notify" && strings.Contains(f.raw, "chatty says"):
				notices++
			case strings.Contains(f.raw, `"available_commands_update"`) && strings.Contains(f.raw, `"name":"chat"`):
				chat = true
			}
		}
		a.stdin.Close()
		if code := waitExit(t, a.cmd, hangGuard); code != 0 {
			t.Fatalf("zot acp at the end of stdin: exit %d\n%s", code, a.stderr)
		}
	}
}

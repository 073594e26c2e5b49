package rpcclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// Steer through a real zot rpc: while the model answers, the steer is
// taken by the running prompt (nil channel), its user_message (kind steer)
// comes on the prompt's channel and the model answers it; with nothing
// running it is a prompt of its own; context waits for the next call and
// an external event runs as a prompt marked with its source.
func TestSteerContextEvent(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"first answer","chunk":2,"delay_ms":100}]},{"steps":[{"echo":true}]}]}`), 0o644)
	c := startZot(t, nil, "--script", script)
	ch, err := c.Prompt(ctx(t), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []wire.UserMessageKind
	steered := false
	for ev := range ch {
		switch e := ev.(type) {
		case *wire.AssistantStartEvent:
			if !steered {
				steered = true
				if sc, err := c.Steer(ctx(t), "shorter please"); err != nil || sc != nil {
					t.Fatalf("Steer while the model answers: %v %v", sc, err)
				}
			}
		case *wire.UserMessageEvent:
			kinds = append(kinds, e.Kind)
		}
	}
	if len(kinds) != 2 || kinds[1] != wire.UserMessageKindSteer {
		t.Errorf("user_message kinds %v", kinds)
	}
	sc, err := c.Steer(ctx(t), "hello")
	if err != nil || sc == nil {
		t.Fatalf("Steer while idle: %v", err)
	}
	for range sc {
	}
	if n, err := c.InjectContext(ctx(t), "disk almost full", "watcher"); n != 1 || err != nil {
		t.Errorf("InjectContext: %d %v", n, err)
	}
	ec, err := c.ExternalEvent(ctx(t), json.RawMessage(`"build failed"`), "ci")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev := range ec {
		if u, ok := ev.(*wire.UserMessageEvent); ok {
			got = append(got, string(u.Kind)+"/"+u.Source)
		}
	}
	if len(got) != 2 || got[0] != "event/ci" || got[1] != "context/watcher" {
		t.Errorf("external event's user messages %v", got)
	}
	_, err = c.InjectContext(ctx(t), string(make([]byte, 64<<10+1)), "")
	wantCode(t, err, wire.CodeLimitExceeded, "inject_context")
}

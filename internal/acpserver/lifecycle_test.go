package acpserver

import (
	"context"
	"testing"
	"time"
)

// A prompt that reaches a session the stopping daemon has just ended is
// refused as cancelled, not as an unknown session: the session is still
// in its file, and the client may load it from the next daemon.
func TestPromptWhileTheAgentClosesIsCancelled(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"ok"}]}]}`, "allow")
	cl := ta.connect()
	cl.init()
	id := cl.newSession(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ta.a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := cl.prompt(id, "hi")
	kind, _, _ := errKind(t, err)
	if kind != "cancelled" {
		t.Errorf("prompt after Close: %v, want kind cancelled", err)
	}
	if !ta.a.stored(id) {
		t.Error("the session's file is gone")
	}
}

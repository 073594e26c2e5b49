package acpserver

import (
	"errors"
	"testing"
	"time"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/wire"
)

// An extension that pushes notices without end to a client that reads
// nothing does not grow that client's queue without bound, and does not
// get the client dropped: past the queue's bound the notices the schema
// marks droppable are not sent to it, as zot rpc drops them; every other
// update is still queued for it.
func TestFloodedNoticesAreBounded(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"ok"}]}]}`, "allow")
	eng, err := ta.host.NewSession(engine.SessionConfig{Provider: "scripted", CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	// A client that never reads: its end of the pipe is never read from.
	agentEnd, clientEnd := jsonrpc.NewPipe()
	defer clientEnd.Close()
	c := jsonrpc.NewConn(agentEnd, jsonrpc.Peer{Transport: "test", Label: "stuck"}, ta.a.Handler, jsonrpc.Options{QueueFrames: 16, StallTimeout: time.Minute})
	defer c.Close()
	h := &conn{agent: ta.a, c: c, open: map[string]*acpSession{}}
	s := ta.a.newSession("flood", eng.CWD(), eng)
	s.attach(h)
	s.answered(h)
	s.watchExtensions()
	defer s.unwatchExtensions()

	const n = 100_000
	for i := range n {
		eng.Notice(&wire.ExtNotifyEvent{Extension: "loud", Level: "info", Message: "again"})
		if i%1000 == 0 {
			eng.Notice(&wire.PanelRenderEvent{Extension: "loud", PanelID: "p", Lines: []string{"x"}})
		}
	}
	select {
	case <-c.Done():
		t.Fatalf("the notices got the client dropped: %v", c.Err())
	default:
	}
	if !c.Behind() {
		t.Fatal("the client's queue is not full: the test proves nothing")
	}
	// What may not be dropped is queued past the bound.
	if err := h.c.PostFunc(8, func(b []byte) []byte { return append(b, `{"jsonrpc":"2.0","method":"x"}`...) }); err != nil {
		t.Fatalf("an update that may not be dropped was refused: %v", err)
	}
	// A client that falls far behind on what may not be dropped is
	// dropped, alone.
	for range 100 {
		s.push(item{text: "kept"})
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a client far behind is not dropped")
	}
	if err := c.Err(); !errors.Is(err, jsonrpc.ErrStalled) {
		t.Fatalf("a client far behind is dropped with %v, want ErrStalled", err)
	}
}

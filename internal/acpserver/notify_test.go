package acpserver

import (
	"testing"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// An extension that pushes notices without end while the session's
// updates cannot leave (its client reads slowly, and the forwarder waits
// for it) does not grow the session's updates without bound: past
// a bound the notices the schema marks droppable are dropped, as zot rpc
// drops them; every other update is kept.
func TestFloodedNoticesAreBounded(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"ok"}]}]}`, "allow")
	eng, err := ta.host.NewSession(engine.SessionConfig{Provider: "scripted", CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	// A session whose forwarder is stuck: nothing takes its updates.
	s := &acpSession{agent: ta.a, id: "flood", eng: eng,
		q: engine.NewSubscription[item](engine.SubscribeOptions{Buffer: ta.a.opts.QueueUpdates, Policy: engine.Block})}
	s.watchExtensions()
	defer s.unwatchExtensions()

	const n = 100_000
	for i := range n {
		eng.Notice(&wire.ExtNotifyEvent{Extension: "loud", Level: "info", Message: "again"})
		if i%1000 == 0 {
			eng.Notice(&wire.PanelRenderEvent{Extension: "loud", PanelID: "p", Lines: []string{"x"}})
		}
	}
	if got, bound := s.q.Len(), maxQueuedNotices*ta.a.opts.QueueUpdates; got > bound {
		t.Fatalf("%d updates wait for a client that reads nothing, past the bound of %d", got, bound)
	}
	// What may not be dropped is kept past the bound.
	s.push(item{text: "kept"})
	if s.q.Len() == 0 {
		t.Fatal("an update that may not be dropped was dropped")
	}
}

package engine

import (
	"errors"
	"testing"

	"zot.dev/zot/sdk/wire"
)

func TestSetMessages(t *testing.T) {
	s := newSession(t, slowScript, nil)
	msgs := []wire.Message{
		{Role: wire.RoleUser, Content: wire.ContentBlocks{&wire.TextBlock{Text: "hi"}}, Time: "2026-11-23T10:00:00.000Z"},
		{Role: wire.RoleAssistant, Content: wire.ContentBlocks{&wire.TextBlock{Text: "hello"}}, Time: "2026-11-23T10:00:01.000Z"},
	}
	if err := s.SetMessages(msgs); err != nil {
		t.Fatalf("SetMessages: %v", err)
	}
	if got := s.Messages(); len(got) != 2 || got[1].Time != msgs[1].Time {
		t.Fatalf("Messages = %+v", got)
	}
	// Results without the call they answer: refused, the transcript stays.
	bad := []wire.Message{{Role: wire.RoleTool, Content: wire.ContentBlocks{&wire.ToolResultBlock{CallID: "x"}}}}
	if err := s.SetMessages(bad); err == nil {
		t.Error("a tool message without its call was accepted")
	}
	if n := s.State().MessageCount; n != 2 {
		t.Errorf("a refused SetMessages left %d messages", n)
	}

	c := newCollector()
	if err := s.Submit(prompt("1", "go", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMessages(nil); !errors.Is(err, ErrBusy) {
		t.Errorf("SetMessages while busy: %v, want ErrBusy", err)
	}
	c.waitDone(t)
	s.Close()
	if err := s.SetMessages(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("SetMessages after Close: %v, want ErrClosed", err)
	}
}

package rpcclient

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// slowScript answers every prompt with 1.6 s of text in 2-byte pieces.
func slowScript(t *testing.T) string {
	return writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": strings.Repeat("slow ", 32), "chunk": 2, "delay_ms": 20},
	}}}})
}

// drainChan reads ch to its end, failing the test at the hang guard.
func drainChan(t *testing.T, ch <-chan wire.Event) []wire.Event {
	t.Helper()
	var evs []wire.Event
	timeout := time.After(hangGuard)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				if n := len(evs); n == 0 || evs[n-1].Type() != wire.TypeDoneEvent {
					t.Fatalf("channel does not end with done: %v", types(evs))
				}
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("no end after %v", types(evs))
		}
	}
}

// stop is the stop reason of the last turn_end in evs.
func stop(evs []wire.Event) wire.StopReason {
	for i := len(evs) - 1; i >= 0; i-- {
		if te, ok := evs[i].(*wire.TurnEndEvent); ok {
			return te.Stop
		}
	}
	return ""
}

// A zot that exits in the middle of a prompt ends its channel with an
// error event saying how, then a done, both of the prompt.
func TestChannelEndsWhenZotExits(t *testing.T) {
	c, err := Start(context.Background(), Options{Bin: os.Args[0], Env: append(cleanEnv(), fakeEnv+"=exit")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, err := c.Prompt(ctx(t), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := drainChan(t, ch)
	if got := strings.Join(types(evs), " "); got != "text_delta error done" {
		t.Fatalf("events %s", got)
	}
	e := evs[1].(*wire.ErrorEvent)
	if e.Code != wire.CodeInternal || !strings.Contains(e.Message, "zot exited (exit status 1)") || !strings.Contains(e.Message, "the fake went away") {
		t.Errorf("error event %+v", e)
	}
	if e.PromptID != evs[0].GetPromptID() || evs[2].GetPromptID() != evs[0].GetPromptID() {
		t.Errorf("the ending is not the prompt's: %v %v %v", evs[0].GetPromptID(), e.PromptID, evs[2].GetPromptID())
	}
}

// A prompt's context ending cancels that prompt and no other: queued, it
// is dropped; running, it is aborted; the work around it runs on.
func TestContextCancelsOnlyItsOwnWork(t *testing.T) {
	c := startZot(t, nil, "--script", slowScript(t))
	prompt := func(ctx context.Context, text string) <-chan wire.Event {
		t.Helper()
		ch, err := c.Prompt(ctx, text, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	firstCtx, cancelFirst := context.WithCancel(ctx(t))
	defer cancelFirst()
	secondCtx, cancelSecond := context.WithCancel(ctx(t))
	defer cancelSecond()
	first := prompt(firstCtx, "one")
	second := prompt(secondCtx, "two")
	third := prompt(ctx(t), "three")

	cancelSecond() // queued: dropped
	for ev := range first {
		if ev.Type() == wire.TypeTextDeltaEvent {
			break
		}
	}
	cancelFirst() // running: aborted
	if evs := drainChan(t, first); stop(evs) != wire.StopAborted {
		t.Errorf("the first prompt ended %q", stop(evs))
	}
	evs := drainChan(t, second)
	if stop(evs) != wire.StopAborted {
		t.Errorf("the second prompt ended %q", stop(evs))
	}
	if _, ran := find[*wire.UserMessageEvent](evs); ran {
		t.Errorf("the dropped prompt ran: %v", types(evs))
	}
	if evs := drainChan(t, third); stop(evs) != wire.StopEndTurn {
		t.Errorf("the third prompt ended %q", stop(evs))
	}
	if err := c.Wait(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if busy, err := c.Busy(ctx(t)); err != nil || busy {
		t.Errorf("busy after all three: %v %v", busy, err)
	}
}

// CancelWork of a prompt that has ended reaches no other work.
func TestCancelWorkOfEndedWork(t *testing.T) {
	c := startZot(t, nil, "--script", slowScript(t))
	done := collect(t, must(c.PromptStream(ctx(t), "one", nil)))
	s := must(c.PromptStream(ctx(t), "two", nil))
	if _, err := s.Next(ctx(t)); err != nil {
		t.Fatal(err)
	}
	res, err := c.CancelWork(ctx(t), done[0].GetPromptID())
	if err != nil || res.Aborted || res.Dropped != 0 {
		t.Errorf("cancelling ended work: %+v, %v", res, err)
	}
	if evs := collect(t, s); stop(evs) != wire.StopEndTurn {
		t.Errorf("the running prompt ended %q", stop(evs))
	}
}

// A channel nobody reads holds up neither zot nor Close, and still ends
// with the done after Close.
func TestCloseEndsAStalledChannel(t *testing.T) {
	c, err := Start(context.Background(), Options{
		Bin:         zotBin,
		Args:        []string{"--provider", "scripted", "--cwd", t.TempDir(), "--script", slowScript(t)},
		Env:         cleanEnv(),
		EventBuffer: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Prompt(ctx(t), "talk", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx(t)); err != nil { // zot finished though nobody read
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	evs := drainChan(t, ch)
	if len(evs) > 2 {
		t.Errorf("a channel of 2 held %d events after Close: %v", len(evs), types(evs))
	}
}

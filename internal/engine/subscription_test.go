package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// manyDeltas streams 300 one-letter deltas at once: work that fills any
// small buffer.
var manyDeltas = `{"turns":[{"steps":[{"text":"` + strings.Repeat("x", 300) + `","chunk":1}]}]}`

// readAll takes every value of q until it ends, and returns them with
// the error it ended with.
func readAll(t *testing.T, q *Subscription[wire.Event]) ([]wire.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var evs []wire.Event
	for {
		ev, err := q.Next(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatal("the subscription never ended")
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// eventually polls cond until it holds, or fails the test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// types lists the events' types.
func types(evs []wire.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ev.Type())
	}
	return b.String()
}

// TestSubscriptionSeesEveryEventInSeqOrder: a session subscription gets
// the events of every piece of work and those given to Emit, stamped, in
// seq order; each work's own Events end with its done, then io.EOF.
func TestSubscriptionSeesEveryEventInSeqOrder(t *testing.T) {
	s := newSession(t, slowScript, nil)
	all := s.Subscribe(SubscribeOptions{Buffer: 4})
	defer all.Close()
	var works []*Subscription[wire.Event]
	for i := 1; i <= 2; i++ {
		q := NewSubscription[wire.Event](SubscribeOptions{Buffer: 2})
		works = append(works, q)
		if err := s.Submit(Work{ID: wire.StringID(fmt.Sprint("p", i)), Prompt: &PromptInput{Text: "hi"}, Events: q}, Queue, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.Emit(&wire.ExtNotifyEvent{Extension: "x", Level: "info", Message: "between"}, nil)
	got := make(chan []wire.Event)
	go func() {
		var evs []wire.Event
		dones := 0
		for dones < 2 {
			ev, err := all.Next(context.Background())
			if err != nil {
				break
			}
			evs = append(evs, ev)
			if _, ok := ev.(*wire.DoneEvent); ok {
				dones++
			}
		}
		got <- evs
	}()
	var own [2][]wire.Event
	for i, q := range works {
		evs, err := readAll(t, q)
		if err != io.EOF {
			t.Errorf("work %d ended with %v, want io.EOF", i+1, err)
		}
		if len(evs) == 0 || evs[len(evs)-1].Type() != wire.TypeDoneEvent {
			t.Fatalf("work %d: %s", i+1, types(evs))
		}
		for _, ev := range evs {
			if id := strings.Trim(ev.GetPromptID().String(), `"`); id != fmt.Sprint("p", i+1) {
				t.Fatalf("work %d got %s of %s", i+1, ev.Type(), id)
			}
		}
		own[i] = evs
	}
	var evs []wire.Event
	select {
	case evs = <-got:
	case <-time.After(guard):
		t.Fatal("the subscription did not see both dones")
	}
	if len(evs) != len(own[0])+len(own[1])+1 {
		t.Fatalf("subscription got %d events, the works %d and %d, plus one notice", len(evs), len(own[0]), len(own[1]))
	}
	notices := 0
	for i, ev := range evs {
		if ev.GetSeq() != int64(i+1) {
			t.Fatalf("event %d (%s) has seq %d", i, ev.Type(), ev.GetSeq())
		}
		if _, ok := ev.(*wire.ExtNotifyEvent); ok {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d notices", notices)
	}
}

// TestBlockPolicyHoldsTheWork: work whose reader takes nothing waits with
// a full buffer, and goes on as it reads.
func TestBlockPolicyHoldsTheWork(t *testing.T) {
	s := newSession(t, manyDeltas, nil)
	q := NewSubscription[wire.Event](SubscribeOptions{Buffer: 3, Policy: Block})
	if err := s.Submit(Work{Prompt: &PromptInput{Text: "hi"}, Events: q}, RefuseBusy, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the buffer fills", func() bool { return q.Len() == 3 })
	time.Sleep(50 * time.Millisecond)
	if n := q.Len(); n != 3 || !s.Busy() {
		t.Fatalf("after a pause: %d waiting (want 3), busy %v", n, s.Busy())
	}
	evs, err := readAll(t, q)
	if err != io.EOF {
		t.Fatalf("ended with %v", err)
	}
	deltas := strings.Count(types(evs), wire.TypeTextDeltaEvent)
	if deltas != 300 || evs[len(evs)-1].Type() != wire.TypeDoneEvent {
		t.Errorf("%d deltas, last %s", deltas, evs[len(evs)-1].Type())
	}
}

// TestDisconnectPolicyDropsAStalledReader: a session subscription whose
// reader stops is disconnected after its stall timeout, and the work runs
// to its end for the others.
func TestDisconnectPolicyDropsAStalledReader(t *testing.T) {
	s := newSession(t, manyDeltas, nil)
	stalled := s.Subscribe(SubscribeOptions{Buffer: 2, Policy: Disconnect, StallTimeout: 30 * time.Millisecond})
	defer stalled.Close()
	reading := s.Subscribe(SubscribeOptions{Buffer: 2, Policy: Block})
	defer reading.Close()
	own := NewSubscription[wire.Event](SubscribeOptions{})
	if err := s.Submit(Work{Prompt: &PromptInput{Text: "hi"}, Events: own}, RefuseBusy, nil); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = readAll(t, own) }()
	var evs []wire.Event
	for {
		ev, err := reading.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type() == wire.TypeDoneEvent {
			break
		}
	}
	if n := strings.Count(types(evs), wire.TypeTextDeltaEvent); n != 300 {
		t.Errorf("the reading subscriber got %d deltas", n)
	}
	if _, err := stalled.Next(context.Background()); !errors.Is(err, ErrStalled) {
		t.Errorf("the stalled subscriber's Next: %v, want ErrStalled", err)
	}
	if n := stalled.Len(); n != 0 {
		t.Errorf("%d events still held for the stalled subscriber", n)
	}
	// The session forgets the disconnected subscriber at once, though
	// its reader has not closed it: a long-lived session does not keep
	// one entry per client that stalled.
	for _, o := range *s.subs.Load() {
		if o.sub == stalled {
			t.Error("the session still has the stalled subscriber")
		}
	}
}

// TestOnlyMarkedTypesAreDropped: past the bound, what the schema marks
// droppable is dropped; every other event is kept, in order.
func TestOnlyMarkedTypesAreDropped(t *testing.T) {
	s := newSession(t, "", nil)
	q := s.Subscribe(SubscribeOptions{Buffer: 2})
	defer q.Close()
	for i := range 10 {
		s.Emit(&wire.ExtNotifyEvent{Extension: "x", Level: "info", Message: fmt.Sprint(i)}, nil)
	}
	s.Emit(&wire.PanelRenderEvent{Extension: "x", PanelID: "p"}, nil)
	for range 3 {
		s.Emit(&wire.ExtDisplayEvent{Extension: "x", Text: "shown"}, nil)
	}
	s.Emit(&wire.PanelOpenEvent{Extension: "x", PanelID: "p"}, nil)
	if d := q.Dropped(); d != 9 {
		t.Errorf("dropped %d, want 9 (8 notices and the render)", d)
	}
	var got []wire.Event
	for q.Len() > 0 {
		ev, err := q.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := "ext_notify ext_notify ext_display ext_display ext_display panel_open"
	if types(got) != want {
		t.Errorf("kept %s, want %s", types(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].GetSeq() <= got[i-1].GetSeq() {
			t.Errorf("seq %d after %d", got[i].GetSeq(), got[i-1].GetSeq())
		}
	}
}

// TestAbortIsNotHeldUpByABlockedSubscriber: while the work waits for a
// reader that takes nothing, an abort ends it at once; the reader then
// finds the ending, in order, after what it had not taken.
func TestAbortIsNotHeldUpByABlockedSubscriber(t *testing.T) {
	s := newSession(t, manyDeltas, nil)
	q := s.Subscribe(SubscribeOptions{Buffer: 1, Policy: Block})
	defer q.Close()
	own := NewSubscription[wire.Event](SubscribeOptions{})
	if err := s.Submit(Work{ID: wire.StringID("p"), Prompt: &PromptInput{Text: "hi"}, Events: own}, RefuseBusy, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the subscriber's buffer fills", func() bool { return q.Len() == 1 })
	if res := s.Abort(false, nil); !res.Aborted {
		t.Fatalf("abort: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := s.Wait(ctx); err != nil {
		t.Fatal("the aborted work did not end while its subscriber took nothing")
	}
	var evs []wire.Event
	for q.Len() > 0 {
		ev, _ := q.Next(ctx)
		evs = append(evs, ev)
	}
	if !strings.HasSuffix(types(evs), "turn_end done") {
		t.Fatalf("subscriber got %s", types(evs))
	}
	if te := evs[len(evs)-2].(*wire.TurnEndEvent); te.Stop != wire.StopAborted {
		t.Errorf("turn_end stop %s", te.Stop)
	}
}

// TestCloseWithABlockedSubscriberLeavesNoGoroutine: closing the session
// while the work waits for a reader that takes nothing ends the work and
// the subscription (what waits, then io.EOF), and leaves no goroutine.
func TestCloseWithABlockedSubscriberLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSession(t, manyDeltas, nil)
	q := s.Subscribe(SubscribeOptions{Buffer: 1, Policy: Block})
	own := NewSubscription[wire.Event](SubscribeOptions{Buffer: 1})
	if err := s.Submit(Work{Prompt: &PromptInput{Text: "hi"}, Events: own}, RefuseBusy, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the buffers fill", func() bool { return q.Len() == 1 && own.Len() == 1 })
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(guard):
		t.Fatal("Close was held up by a subscriber that takes nothing")
	}
	for _, sub := range []*Subscription[wire.Event]{q, own} {
		evs, err := readAll(t, sub)
		if err != io.EOF {
			t.Errorf("ended with %v, want io.EOF", err)
		}
		if !strings.HasSuffix(types(evs), "turn_end done") {
			t.Errorf("got %s", types(evs))
		}
	}
	s.host.Close()
	eventually(t, "the goroutines end", func() bool { return runtime.NumGoroutine() <= before })
}

// TestSubscriptionReaderSide: Take moves every waiting value at once and
// reuses the slice it is given; the reader's Close frees a producer that
// waits for room; Next ends with ctx.
func TestSubscriptionReaderSide(t *testing.T) {
	q := NewSubscription[int](SubscribeOptions{Buffer: 2})
	for i := range 5 {
		q.Push(i)
	}
	if q.Offer(9) || q.Dropped() != 1 {
		t.Errorf("Offer past the bound: dropped %d", q.Dropped())
	}
	batch, err := q.Take(context.Background(), nil)
	if err != nil || fmt.Sprint(batch) != "[0 1 2 3 4]" {
		t.Fatalf("Take: %v %v", batch, err)
	}
	q.PushAll([]int{5, 6})
	next, err := q.Take(context.Background(), batch)
	if err != nil || fmt.Sprint(next) != "[5 6]" {
		t.Fatalf("second Take: %v %v", next, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := q.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next on an empty subscription: %v", err)
	}
	q.Push(6)
	q.Push(7)
	waited := make(chan error, 1)
	go func() { waited <- q.Wait(context.Background()) }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v with a full buffer", err)
	case <-time.After(20 * time.Millisecond):
	}
	q.Close()
	select {
	case err := <-waited:
		if !errors.Is(err, ErrSubscriptionClosed) {
			t.Errorf("Wait after Close: %v", err)
		}
	case <-time.After(guard):
		t.Fatal("the reader's Close did not free the waiting producer")
	}
	if q.Push(8) || q.Len() != 0 {
		t.Errorf("a closed subscription took a value (%d waiting)", q.Len())
	}
	if _, err := q.Next(context.Background()); !errors.Is(err, ErrSubscriptionClosed) {
		t.Errorf("Next after Close: %v", err)
	}
}

// BenchmarkSubscription moves events from a producer that waits for room
// (Block) to a reader, one at a time (Next) and in batches (Take).
func BenchmarkSubscription(b *testing.B) {
	ev := &wire.TextDeltaEvent{Delta: "x"}
	for _, batch := range []bool{false, true} {
		name := map[bool]string{false: "next", true: "take"}[batch]
		b.Run(name, func(b *testing.B) {
			q := NewSubscription[wire.Event](SubscribeOptions{Buffer: 256, Policy: Block})
			done := make(chan struct{})
			go func() {
				defer close(done)
				var buf []wire.Event
				for {
					var err error
					if batch {
						buf, err = q.Take(context.Background(), buf)
					} else {
						_, err = q.Next(context.Background())
					}
					if err != nil {
						return
					}
				}
			}()
			b.ReportAllocs()
			for b.Loop() {
				_ = q.Wait(context.Background())
				q.Push(ev)
			}
			q.End()
			<-done
		})
	}
}

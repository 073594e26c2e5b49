package correlate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// cancels records OnCancel's calls.
type cancels struct {
	mu  sync.Mutex
	ids []string
	why []error
}

func (c *cancels) record(id string, why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id)
	c.why = append(c.why, why)
}

func (c *cancels) get() ([]string, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...), append([]error(nil), c.why...)
}

func newTable() (*Table[string, string], *cancels) {
	c := &cancels{}
	return New[string, string](Options[string]{OnCancel: c.record}), c
}

func TestResolve(t *testing.T) {
	calls, cancelled := newTable()
	got, err := calls.Call(context.Background(), time.Minute, func(id string) error {
		if id != "1" {
			t.Errorf("first id %q, want 1", id)
		}
		if n := calls.Len(); n != 1 {
			t.Errorf("%d calls waiting while sending, want 1", n)
		}
		go calls.Resolve(id, "answer to "+id)
		return nil
	})
	if err != nil || got != "answer to 1" {
		t.Fatalf("got %q, %v", got, err)
	}
	if n := calls.Len(); n != 0 {
		t.Fatalf("%d calls left", n)
	}
	if calls.Resolve("1", "again") {
		t.Fatal("a second answer was taken")
	}
	if calls.Resolve("nope", "x") {
		t.Fatal("an answer to an unknown id was taken")
	}
	if ids, _ := cancelled.get(); len(ids) != 0 {
		t.Fatalf("OnCancel called for %q", ids)
	}
}

// TestAnswerBeforeWait checks that an answer that arrives before Wait
// (even one whose ctx has ended) is returned.
func TestAnswerBeforeWait(t *testing.T) {
	calls, _ := newTable()
	p, err := calls.Start()
	if err != nil {
		t.Fatal(err)
	}
	if !calls.Resolve(p.ID(), "early") {
		t.Fatal("Resolve: false")
	}
	<-p.Done()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 2 { // and again
		if got, err := p.Wait(ctx, time.Nanosecond); err != nil || got != "early" {
			t.Fatalf("got %q, %v", got, err)
		}
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls, cancelled := newTable()
		start := time.Now()
		var sent string
		_, err := calls.Call(t.Context(), 5*time.Second, func(id string) error { sent = id; return nil })
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("gave up after %v", d)
		}
		if want := "call 1: no answer in time (waited 5s)"; err.Error() != want {
			t.Fatalf("err %q, want %q", err, want)
		}
		if n := calls.Len(); n != 0 {
			t.Fatalf("%d calls left", n)
		}
		ids, why := cancelled.get()
		if len(ids) != 1 || ids[0] != sent || !errors.Is(why[0], ErrTimeout) {
			t.Fatalf("OnCancel got %q %v", ids, why)
		}
		if calls.Resolve(sent, "late") {
			t.Fatal("a late answer was taken")
		}
	})
}

func TestCtxCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls, cancelled := newTable()
		ctx, cancel := context.WithCancel(t.Context())
		p, err := calls.Start()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := p.Wait(ctx, time.Hour)
			done <- err
		}()
		synctest.Wait()
		if n := calls.Len(); n != 1 {
			t.Fatalf("%d calls waiting, want 1", n)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
		ids, why := cancelled.get()
		if len(ids) != 1 || ids[0] != p.ID() || !errors.Is(why[0], context.Canceled) {
			t.Fatalf("OnCancel got %q %v", ids, why)
		}
		if calls.Resolve(p.ID(), "late") {
			t.Fatal("a late answer was taken")
		}
		// The ctx's deadline is reported as the ctx's, not ErrTimeout.
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = calls.Call(ctx, time.Hour, func(string) error { return nil })
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
			t.Fatalf("err %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestCallCtxAlreadyDone(t *testing.T) {
	calls, _ := newTable()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := calls.Call(ctx, 0, func(string) error {
		t.Error("a request was sent for a ctx that had ended")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestSendFails(t *testing.T) {
	calls, cancelled := newTable()
	broken := errors.New("broken pipe")
	_, err := calls.Call(context.Background(), 0, func(string) error { return broken })
	if !errors.Is(err, broken) {
		t.Fatalf("err %v, want the send error", err)
	}
	if n := calls.Len(); n != 0 {
		t.Fatalf("%d calls left", n)
	}
	if ids, _ := cancelled.get(); len(ids) != 0 {
		t.Fatalf("OnCancel called for %q, but the peer never saw the request", ids)
	}
}

func TestForget(t *testing.T) {
	calls, _ := newTable()
	p, _ := calls.Start()
	p.Forget(nil)
	if _, err := p.Wait(context.Background(), 0); !errors.Is(err, ErrForgotten) {
		t.Fatalf("err %v", err)
	}
	if calls.Resolve(p.ID(), "x") {
		t.Fatal("an answer to a forgotten call was taken")
	}
	// Forgetting an answered call changes nothing.
	q, _ := calls.Start()
	calls.Resolve(q.ID(), "kept")
	q.Forget(errors.New("too late"))
	if got, err := q.Wait(context.Background(), 0); err != nil || got != "kept" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestReject(t *testing.T) {
	calls, _ := newTable()
	bad := errors.New("undecodable answer")
	_, err := calls.Call(context.Background(), 0, func(id string) error {
		go calls.Reject(id, bad)
		return nil
	})
	if !errors.Is(err, bad) || err.Error() != "call 1: undecodable answer" {
		t.Fatalf("err %v", err)
	}
	if calls.Reject("1", bad) {
		t.Fatal("Reject of an ended call: true")
	}
}

func TestCloseFailsAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls, cancelled := newTable()
		crashed := errors.New("extension exited: signal: killed")
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				_, err := calls.Call(t.Context(), time.Hour, func(string) error { return nil })
				if !errors.Is(err, crashed) {
					t.Errorf("err %v, want the cause", err)
				}
			})
		}
		synctest.Wait()
		if n := calls.Len(); n != 10 {
			t.Fatalf("%d calls waiting, want 10", n)
		}
		calls.Close(crashed)
		wg.Wait()
		if n := calls.Len(); n != 0 {
			t.Fatalf("%d calls left", n)
		}
		if ids, _ := cancelled.get(); len(ids) != 0 {
			t.Fatalf("OnCancel called for %q", ids)
		}
		if err := calls.Err(); err != crashed {
			t.Fatalf("Err %v", err)
		}

		// Later calls fail at once, without sending.
		_, err := calls.Call(t.Context(), time.Hour, func(string) error {
			t.Error("sent after Close")
			return nil
		})
		if !errors.Is(err, crashed) {
			t.Fatalf("Call after Close: %v", err)
		}
		if _, err := calls.Start(); !errors.Is(err, crashed) {
			t.Fatalf("Start after Close: %v", err)
		}
		// The first cause stays.
		calls.Close(errors.New("second"))
		if err := calls.Err(); err != crashed {
			t.Fatalf("Err after a second Close: %v", err)
		}
		if calls.Resolve("1", "late") {
			t.Fatal("an answer after Close was taken")
		}
	})
}

func TestCloseNil(t *testing.T) {
	calls, _ := newTable()
	p, _ := calls.Start()
	calls.Close(nil)
	if _, err := p.Wait(context.Background(), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("err %v", err)
	}
	if _, err := calls.Start(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start: %v", err)
	}
}

// TestConcurrentCalls runs hundreds of callers against a peer that
// answers every request, in a random order, once all are in (and every
// fifth caller has given up, so its answer comes late).
func TestConcurrentCalls(t *testing.T) {
	const callers = 500
	calls, cancelled := newTable()
	requests := make(chan string, callers)
	late := make(chan int)
	go func() { // the peer
		var ids []string
		for id := range requests {
			ids = append(ids, id)
		}
		rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		n := 0
		for _, id := range ids {
			if !calls.Resolve(id, "re:"+id) {
				n++
			}
		}
		late <- n
	}()
	var sent, done sync.WaitGroup
	var mu sync.Mutex
	answered, gaveUp := 0, 0
	seen := make(map[string]bool)
	for i := range callers {
		sent.Add(1)
		done.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var id string
			got, err := calls.Call(ctx, time.Minute, func(callID string) error {
				id = callID
				requests <- id
				if i%5 == 0 {
					cancel() // counted as sent once it has given up
				} else {
					sent.Done()
				}
				return nil
			})
			if i%5 == 0 {
				sent.Done()
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[id] {
				t.Errorf("id %q handed out twice", id)
			}
			seen[id] = true
			switch {
			case i%5 != 0 && err == nil && got == "re:"+id:
				answered++
			case i%5 == 0 && errors.Is(err, context.Canceled):
				gaveUp++
			default:
				t.Errorf("caller %d (id %s): got %q, %v", i, id, got, err)
			}
		})
	}
	sent.Wait()
	close(requests)
	done.Wait()
	if answered != callers-callers/5 || gaveUp != callers/5 {
		t.Fatalf("answered %d, gave up %d, of %d", answered, gaveUp, callers)
	}
	if n := <-late; n != gaveUp {
		t.Fatalf("%d late answers, want one per caller that gave up (%d)", n, gaveUp)
	}
	if ids, _ := cancelled.get(); len(ids) != gaveUp {
		t.Fatalf("OnCancel called %d times, want %d", len(ids), gaveUp)
	}
	if n := calls.Len(); n != 0 {
		t.Fatalf("%d calls left", n)
	}
}

// TestConcurrentResolveAndGiveUp races answers against deadlines: every
// call ends exactly once, with its answer or its timeout, and each
// answer is either taken or reported late.
func TestConcurrentResolveAndGiveUp(t *testing.T) {
	const callers = 300
	calls, cancelled := newTable()
	var wg sync.WaitGroup
	var taken, timedOut, lateAnswers sync.Map
	for range callers {
		wg.Go(func() {
			p, err := calls.Start()
			if err != nil {
				t.Error(err)
				return
			}
			id := p.ID()
			wg.Go(func() {
				time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				if calls.Resolve(id, id) {
					taken.Store(id, true)
				} else {
					lateAnswers.Store(id, true)
				}
			})
			got, err := p.Wait(context.Background(), time.Duration(rand.IntN(200))*time.Microsecond)
			switch {
			case err == nil && got == id:
			case errors.Is(err, ErrTimeout):
				timedOut.Store(id, true)
			default:
				t.Errorf("id %s: got %q, %v", id, got, err)
			}
		})
	}
	wg.Wait()
	count := func(m *sync.Map) (n int) {
		m.Range(func(any, any) bool { n++; return true })
		return n
	}
	nTaken, nTimedOut, nLate := count(&taken), count(&timedOut), count(&lateAnswers)
	if nTaken+nLate != callers || nTimedOut != nLate {
		t.Fatalf("%d answers taken, %d late, %d timeouts, of %d", nTaken, nLate, nTimedOut, callers)
	}
	timedOut.Range(func(id, _ any) bool {
		if _, ok := lateAnswers.Load(id); !ok {
			t.Errorf("call %s timed out but its answer was taken", id)
		}
		return true
	})
	if ids, _ := cancelled.get(); len(ids) != nTimedOut {
		t.Fatalf("OnCancel called %d times, want %d", len(ids), nTimedOut)
	}
	if n := calls.Len(); n != 0 {
		t.Fatalf("%d calls left", n)
	}
	t.Logf("%d answered, %d timed out", nTaken, nTimedOut)
}

func TestIDs(t *testing.T) {
	s := New[string, int](Options[string]{})
	for i := 1; i <= 3; i++ {
		p, _ := s.Start()
		if want := strconv.Itoa(i); p.ID() != want {
			t.Fatalf("string id %q, want %q", p.ID(), want)
		}
	}
	n := New[int64, int](Options[int64]{})
	if p, _ := n.Start(); p.ID() != 1 {
		t.Fatalf("int64 id %d, want 1", p.ID())
	}
	if p, _ := New[int, int](Options[int]{}).Start(); p.ID() != 1 {
		t.Fatalf("int id %d, want 1", p.ID())
	}
	if p, _ := New[uint64, int](Options[uint64]{}).Start(); p.ID() != 1 {
		t.Fatalf("uint64 id %d, want 1", p.ID())
	}

	// A caller's own id type and format.
	type wireID struct{ raw string }
	w := New[wireID, int](Options[wireID]{ID: func(n uint64) wireID { return wireID{fmt.Sprintf("%q", fmt.Sprint("ext-", n))} }})
	p, _ := w.Start()
	if p.ID().raw != `"ext-1"` {
		t.Fatalf("custom id %q", p.ID().raw)
	}
	if !w.Resolve(wireID{`"ext-1"`}, 7) {
		t.Fatal("Resolve by a custom id: false")
	}

	// An id type with no default needs Options.ID.
	defer func() {
		if recover() == nil {
			t.Fatal("New without ID for a struct id did not panic")
		}
	}()
	New[wireID, int](Options[wireID]{})
}

func TestDuplicateID(t *testing.T) {
	calls := New[string, int](Options[string]{ID: func(uint64) string { return "same" }})
	if _, err := calls.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := calls.Start(); err == nil {
		t.Fatal("a second call under a waiting id was started")
	}
}

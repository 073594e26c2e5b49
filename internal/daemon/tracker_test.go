package daemon

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestTrackerTiming holds the ephemeral rule to exact times on a fake
// clock: never before the first client, grace after the last one left,
// and a client that comes within the grace cancels the exit.
func TestTrackerTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fired := make(chan time.Time, 1)
		start := time.Now()
		tr := &tracker{grace: time.Second, fire: func() { fired <- time.Now() }}
		idle := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}
		idle(time.Hour) // no client ever: nothing fires
		if len(fired) != 0 {
			t.Fatal("fired before the first client")
		}
		tr.opened()
		tr.opened()
		tr.closed()
		idle(10 * time.Second) // one client still there
		if len(fired) != 0 {
			t.Fatal("fired with a client connected")
		}
		tr.closed()
		idle(999 * time.Millisecond)
		tr.opened() // within the grace: cancels the exit
		idle(10 * time.Second)
		if len(fired) != 0 {
			t.Fatal("a client that came within the grace did not cancel the exit")
		}
		tr.closed()
		left := time.Now()
		idle(2 * time.Second)
		select {
		case at := <-fired:
			if got := at.Sub(left); got != time.Second {
				t.Fatalf("fired %v after the last client left, want 1s", got)
			}
		default:
			t.Fatalf("did not fire (%v since start)", time.Since(start))
		}
		// Once fired, nothing fires again.
		tr.opened()
		tr.closed()
		idle(time.Minute)
		if len(fired) != 0 {
			t.Fatal("fired twice")
		}
		tr.stop()
	})
}

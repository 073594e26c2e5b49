package daemon

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// An ephemeral daemon whose last client left while work runs waits for
// the work to end, then exits within a grace.
func TestTrackerWaitsWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fired := make(chan time.Time, 1)
		var busy atomic.Bool
		busy.Store(true)
		tr := &tracker{grace: time.Second, busy: busy.Load, fire: func() { fired <- time.Now() }}
		tr.opened()
		tr.closed()
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(fired) != 0 {
			t.Fatal("fired while busy")
		}
		done := time.Now()
		busy.Store(false)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case at := <-fired:
			if d := at.Sub(done); d > time.Second {
				t.Errorf("fired %v after the work ended, want within the grace", d)
			}
		default:
			t.Fatal("did not fire once the work ended")
		}
		tr.stop()
	})
}

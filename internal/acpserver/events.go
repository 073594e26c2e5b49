package acpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// eventQueue holds a session's external events that wait for their turn
// (_zot/session/external_event sent while a turn runs). It is guarded by
// the session's mu.
//
// An event waits here rather than in the engine's queue so that its turn
// starts only once the answer of the turn before it is queued: ACP
// attributes the updates a client gets before a session/prompt's answer
// to that prompt, and an event's turn must not look like more of it.
type eventQueue struct {
	waiting []*int        // one ticket per waiting event, first first
	last    *turn         // the session's latest turn
	wake    chan struct{} // closed (and dropped) when a waiting event may go on
}

// markAnswered notes that the answer to the request that started t is
// queued: an event waiting for t may start its turn.
func (t *turn) markAnswered() {
	t.answeredOnce.Do(func() {
		close(t.answered)
		t.s.mu.Lock()
		t.s.wakeEventsLocked()
		t.s.mu.Unlock()
	})
}

// wakeEventsLocked wakes the waiting events to look again.
func (s *acpSession) wakeEventsLocked() {
	if s.events.wake != nil {
		close(s.events.wake)
		s.events.wake = nil
	}
}

// queueEvent takes a place for an event at the end of the queue, or
// fails with limit_exceeded when agent.MaxInboxPending events wait.
func (s *acpSession) queueEvent() (*int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events.waiting) >= agent.MaxInboxPending {
		return nil, wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("external_event: %d already wait, the most a session holds", agent.MaxInboxPending))
	}
	ticket := new(int)
	s.events.waiting = append(s.events.waiting, ticket)
	return ticket, nil
}

// leaveEvents gives up ticket's place, letting the next event go on.
func (s *acpSession) leaveEvents(ticket *int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.events.waiting, ticket); i >= 0 {
		s.events.waiting = slices.Delete(s.events.waiting, i, i+1)
		s.wakeEventsLocked()
	}
}

// startEvent starts w, the turn of the event holding ticket, once the
// events before it have started, no turn runs, and the answer of the
// latest turn is queued; then it leaves the queue. It returns ctx's
// error when ctx ends first (the event then never runs), and the
// engine's refusal of w as it is.
func (s *acpSession) startEvent(ctx context.Context, from *conn, ticket *int, w engine.Work) (*turn, error) {
	defer s.leaveEvents(ticket)
	for {
		s.mu.Lock()
		ready := s.events.waiting[0] == ticket && s.turn == nil && (s.events.last == nil || isClosed(s.events.last.answered))
		if !ready && s.events.wake == nil {
			s.events.wake = make(chan struct{})
		}
		wake := s.events.wake
		s.mu.Unlock()
		if ready {
			t, err := s.start(from, w, nil)
			if !errors.Is(err, engine.ErrBusy) {
				return t, err
			}
			// Busy without a turn of this door's: wait for the engine.
			if err := s.eng.Wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

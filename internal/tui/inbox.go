package tui

import (
	"sync"

	"zot.dev/zot/internal/tui/acpclient"
)

// maxQueued is how many of the agent's events wait for the program
// before the connection's reader is held back (the agent's updates then
// wait in the connection, its backpressure, rather than here).
const maxQueued = 8192

// inbox hands the agent's events to the program coalesced: the
// connection's reader appends to a queue and, when the queue was empty,
// sends the program one eventsMsg; Update takes everything queued by
// then. A stream of small updates so costs one Update and one frame per
// batch, not per update.
type inbox struct {
	mu     sync.Mutex
	room   *sync.Cond // signalled when the queue is taken or the inbox closed
	evs    []acpclient.Event
	woken  bool // an eventsMsg is on its way and has not been taken
	closed bool
	send   func(eventsMsg) // p.Send
}

// eventsMsg says events are queued in the inbox.
type eventsMsg struct{}

func newInbox(send func(eventsMsg)) *inbox {
	b := &inbox{send: send}
	b.room = sync.NewCond(&b.mu)
	return b
}

// put queues ev, in order, waiting while the queue is full.
func (b *inbox) put(ev acpclient.Event) {
	b.mu.Lock()
	for len(b.evs) >= maxQueued && !b.closed {
		b.room.Wait()
	}
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.evs = append(b.evs, ev)
	wake := !b.woken
	b.woken = true
	b.mu.Unlock()
	if wake {
		b.send(eventsMsg{})
	}
}

// take returns everything queued and lets the next put wake the
// program again.
func (b *inbox) take() []acpclient.Event {
	b.mu.Lock()
	evs := b.evs
	b.evs, b.woken = nil, false
	b.room.Broadcast()
	b.mu.Unlock()
	return evs
}

// close drops what is queued and lets a waiting put return: the program
// has ended.
func (b *inbox) close() {
	b.mu.Lock()
	b.closed, b.evs = true, nil
	b.room.Broadcast()
	b.mu.Unlock()
}

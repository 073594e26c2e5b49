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
	mu   sync.Mutex
	room *sync.Cond // signalled when the queue is taken or the inbox closed
	evs  []acpclient.Event
	// text is the text of evs' last event, an acpclient.Text that the
	// chunks after it joined, while joined is set.
	text   []byte
	joined bool
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

// maxJoined is the most text consecutive chunks are joined into while
// queued.
const maxJoined = 1 << 20

// put queues ev, in order, waiting while the queue is full. A text
// chunk that follows one of the same session and kind is joined to it:
// the program applies and renders the text a batch brought once.
func (b *inbox) put(ev acpclient.Event) {
	b.mu.Lock()
	if t, ok := ev.(acpclient.Text); ok && b.join(t) {
		b.mu.Unlock()
		return
	}
	for len(b.evs) >= maxQueued && !b.closed {
		b.room.Wait()
	}
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.seal()
	b.evs = append(b.evs, ev)
	wake := !b.woken
	b.woken = true
	b.mu.Unlock()
	if wake {
		b.send(eventsMsg{})
	}
}

// join appends t to the queue's last event when that is text of the
// same session and kind (and not too long yet), reporting whether it
// did.
func (b *inbox) join(t acpclient.Text) bool {
	n := len(b.evs)
	if n == 0 || b.closed {
		return false
	}
	last, ok := b.evs[n-1].(acpclient.Text)
	if !ok || last.SessionID != t.SessionID || last.Thought != t.Thought {
		return false
	}
	if size := len(last.Text); size > maxJoined || b.joined && len(b.text) > maxJoined {
		return false
	}
	if !b.joined {
		b.text = append(b.text[:0], last.Text...)
		b.joined = true
	}
	b.text = append(b.text, t.Text...)
	return true
}

// seal writes the joined text into the last event.
func (b *inbox) seal() {
	if !b.joined {
		return
	}
	n := len(b.evs)
	last := b.evs[n-1].(acpclient.Text)
	last.Text = string(b.text)
	b.evs[n-1] = last
	b.joined = false
	if cap(b.text) > 64<<10 {
		b.text = nil // a long answer's buffer is not kept
	}
}

// take returns everything queued and lets the next put wake the
// program again.
func (b *inbox) take() []acpclient.Event {
	b.mu.Lock()
	b.seal()
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
	b.closed, b.evs, b.joined = true, nil, false
	b.room.Broadcast()
	b.mu.Unlock()
}

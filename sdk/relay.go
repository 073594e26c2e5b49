package sdk

import (
	"context"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// relay carries one prompt's events from the session to the channel its
// caller reads. The session hands each event over without blocking (it
// stamps events under a lock that an abort needs); a forwarding goroutine
// moves them to the channel in order. Backpressure is the session's Ready
// step: while the caller keeps up, at most the channel's capacity of events
// waits, and a slow caller slows the agent down. Once the prompt's context
// has ended, or the Runtime is closing, the agent no longer waits: events
// queue and follow, in order, after the run. The channel always ends with
// the done event, then closes.
type relay struct {
	ch      chan Event
	size    int
	closing <-chan struct{}
	wg      *sync.WaitGroup

	mu      sync.Mutex
	queue   []Event
	started bool          // the forwarder runs
	wake    chan struct{} // the queue grew (for the forwarder)
	room    chan struct{} // the queue shrank (for ready)
}

func newRelay(size int, closing <-chan struct{}, wg *sync.WaitGroup) *relay {
	return &relay{
		ch:      make(chan Event, size),
		size:    size,
		closing: closing,
		wg:      wg,
		wake:    make(chan struct{}, 1),
		room:    make(chan struct{}, 1),
	}
}

// ready is the work's engine.Work.Ready: it waits while a channel's worth
// of events is still queued, until the prompt's context ends or the
// Runtime closes.
func (r *relay) ready(ctx context.Context) {
	for {
		r.mu.Lock()
		n := len(r.queue)
		r.mu.Unlock()
		if n < r.size {
			return
		}
		select {
		case <-r.room:
		case <-ctx.Done():
			return
		case <-r.closing:
			return
		}
	}
}

// sink is the work's engine.Sink: it queues ev and never blocks.
func (r *relay) sink(_ context.Context, ev wire.Event) {
	r.mu.Lock()
	r.queue = append(r.queue, ev)
	start := !r.started
	r.started = true
	r.mu.Unlock()
	if start {
		r.wg.Add(1)
		go r.forward()
	}
	poke(r.wake)
}

// forward moves queued events to the channel, in order, and closes it
// after the done. When the Runtime closes while the caller is not taking
// events, the events still queued are dropped and room is made for the
// done (by dropping the oldest event not yet taken): the channel always
// ends with it.
func (r *relay) forward() {
	defer r.wg.Done()
	defer close(r.ch)
	for {
		ev, ok := r.next()
		if !ok {
			select {
			case <-r.wake:
				continue
			case <-r.closing:
				r.finishClosed(nil)
				return
			}
		}
		select {
		case r.ch <- ev:
			if _, last := ev.(*wire.DoneEvent); last {
				return
			}
		case <-r.closing:
			r.finishClosed(ev)
			return
		}
	}
}

// next takes the queue's head, telling ready there is room.
func (r *relay) next() (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return nil, false
	}
	ev := r.queue[0]
	r.queue[0] = nil
	r.queue = r.queue[1:]
	poke(r.room)
	return ev, true
}

// finishClosed delivers the done once it comes (the session always sends
// one), making room for it if the caller is not reading. held is the event
// the forwarder had taken from the queue, if any.
func (r *relay) finishClosed(held Event) {
	for {
		r.mu.Lock()
		var done Event
		if _, last := held.(*wire.DoneEvent); last {
			done = held
		}
		for _, ev := range r.queue {
			if _, last := ev.(*wire.DoneEvent); last {
				done = ev
			}
		}
		if done != nil {
			r.queue = nil
		}
		r.mu.Unlock()
		if done == nil {
			<-r.wake
			continue
		}
		for {
			select {
			case r.ch <- done:
				return
			default:
			}
			select {
			case <-r.ch:
			default:
			}
		}
	}
}

// poke signals c without blocking.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

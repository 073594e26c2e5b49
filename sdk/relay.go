package sdk

import (
	"context"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// relay carries one prompt's events from the session to the channel its
// caller reads. While the caller keeps up, each event is handed over
// directly and a slow caller slows the agent down (the channel's buffer
// absorbs bursts). Once the prompt's context has ended or the Runtime is
// closing, events the caller is not ready for wait in a backlog instead of
// stalling the agent; they follow, in order, after the run. The done event
// never blocks the session: when it cannot be handed over at once, a
// goroutine delivers the backlog and the done, and closes the channel.
type relay struct {
	ch      chan Event
	closing <-chan struct{}
	wg      *sync.WaitGroup

	mu      sync.Mutex
	backlog []Event
}

func newRelay(size int, closing <-chan struct{}, wg *sync.WaitGroup) *relay {
	return &relay{ch: make(chan Event, size), closing: closing, wg: wg}
}

// sink is the work's engine.Sink.
func (r *relay) sink(ctx context.Context, ev wire.Event) {
	if _, last := ev.(*wire.DoneEvent); last {
		r.end(ev)
		return
	}
	r.mu.Lock()
	lagging := len(r.backlog) > 0
	if lagging {
		r.backlog = append(r.backlog, ev)
	}
	r.mu.Unlock()
	if lagging {
		return
	}
	select {
	case r.ch <- ev:
		return
	case <-ctx.Done():
	case <-r.closing:
	}
	r.mu.Lock()
	r.backlog = append(r.backlog, ev)
	r.mu.Unlock()
}

// end takes the done event without blocking.
func (r *relay) end(done Event) {
	r.mu.Lock()
	if len(r.backlog) == 0 {
		select {
		case r.ch <- done:
			r.mu.Unlock()
			close(r.ch)
			return
		default:
		}
	}
	list := append(r.backlog, done)
	r.backlog = nil
	r.mu.Unlock()
	r.wg.Add(1)
	go r.drain(list)
}

// drain delivers the last events and closes the channel. When the Runtime
// closes while the caller is not taking them, the events still waiting are
// dropped, and room is made for the done (by dropping the oldest event not
// yet taken): the channel always ends with it.
func (r *relay) drain(list []Event) {
	defer r.wg.Done()
	defer close(r.ch)
	for _, ev := range list {
		select {
		case r.ch <- ev:
			continue
		case <-r.closing:
		}
		done := list[len(list)-1]
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

package rpcclient

import (
	"context"
	"io"
	"iter"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// Stream is the events of one prompt or compaction, in order, ending with
// its `done`. Events are buffered without bound until read. A Stream may
// be read from one goroutine at a time.
type Stream struct {
	// ID is the command's id; every event of the work carries it as
	// `prompt_id`.
	ID wire.ID
	// Command is "prompt" or "compact".
	Command string
	// Start is the command's answer: Started, or Queued with the Position
	// in the queue (1 runs next).
	Start wire.StartResult

	mu       sync.Mutex
	queue    []wire.Event
	finished bool  // done was queued, or the process went away
	err      error // why, when the process went away before done
	notify   chan struct{}
	ended    chan struct{} // closed when finished is set
}

func newStream(command string) *Stream {
	return &Stream{Command: command, notify: make(chan struct{}, 1), ended: make(chan struct{})}
}

// push queues ev; `done` finishes the stream.
func (s *Stream) push(ev wire.Event) {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, ev)
	if ev.Type() == wire.TypeDoneEvent {
		s.finished = true
		close(s.ended)
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// fail finishes the stream with err after the events already queued.
func (s *Stream) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	s.err = err
	close(s.ended)
}

// Next returns the next event. After `done` it returns io.EOF; if the
// process went away before `done`, an error wrapping ErrExited (or
// ErrClosed). It waits for an event until ctx ends.
func (s *Stream) Next(ctx context.Context) (wire.Event, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, nil
		}
		if s.finished {
			err := s.err
			s.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return nil, err
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-s.ended:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// All iterates over the remaining events, `done` included. It stops after
// `done`, or yields one final error (the process went away, or ctx ended).
func (s *Stream) All(ctx context.Context) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		for {
			ev, err := s.Next(ctx)
			if err == io.EOF {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Collect reads every remaining event, `done` included. On an error it
// returns the events read so far with it.
func (s *Stream) Collect(ctx context.Context) ([]wire.Event, error) {
	var evs []wire.Event
	for ev, err := range s.All(ctx) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

package rpcclient

import (
	"context"
	"io"

	"zot.dev/zot/sdk/wire"
)

// defaultEventBuffer is the capacity of an event channel when
// Options.EventBuffer is zero.
const defaultEventBuffer = 256

// events returns a channel that a goroutine of the Client's fills with
// s's events, in order, closing it after the done. When ctx ends before
// the done, the work is cancelled (see cancelWork); its events still come,
// up to the done.
func (c *Client) events(ctx context.Context, s *Stream) <-chan wire.Event {
	size := c.opts.EventBuffer
	if size <= 0 {
		size = defaultEventBuffer
	}
	ch := make(chan wire.Event, max(size, 2))
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		// Close has begun and waits for no new goroutine: end the
		// channel here, as a closing client ends every channel.
		for _, ev := range s.ending(ErrClosed) {
			ch <- ev
		}
		close(ch)
		return ch
	}
	c.forwarders.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.forwarders.Done()
		c.forward(ctx, s, ch)
	}()
	return ch
}

// forward moves s's events to ch. A consumer that stops reading holds up
// only this goroutine (the Stream buffers behind it) until Close begins;
// from then on the events not yet taken are dropped but the last, which
// is put in the channel, making room by dropping the oldest one not taken.
// When the process ends before the work's done, the channel ends with an
// error event saying so and a done.
func (c *Client) forward(ctx context.Context, s *Stream, ch chan wire.Event) {
	defer close(ch)
	wait := ctx // the context Next waits with, until ctx ends once
	for {
		ev, err := s.Next(wait)
		if err != nil && wait != context.Background() && err == wait.Err() {
			c.cancelWork(s)
			wait = context.Background()
			continue
		}
		if err == io.EOF {
			return // the done went out
		}
		if err != nil {
			c.finish(ch, s.ending(err))
			return
		}
		for sent := false; !sent; {
			select {
			case ch <- ev:
				sent = true
			case <-wait.Done():
				c.cancelWork(s)
				wait = context.Background()
			case <-c.closing:
				c.finish(ch, c.drain(s, ev))
				return
			}
		}
		if ev.Type() == wire.TypeDoneEvent {
			return
		}
	}
}

// drain drops s's events (held, then those still to come) up to its end,
// and returns the events that end it: the done, or an error and a done
// when the process ended before it.
func (c *Client) drain(s *Stream, held wire.Event) []wire.Event {
	if held.Type() == wire.TypeDoneEvent {
		return []wire.Event{held}
	}
	for {
		ev, err := s.Next(context.Background())
		if err != nil {
			return s.ending(err)
		}
		if ev.Type() == wire.TypeDoneEvent {
			return []wire.Event{ev}
		}
	}
}

// finish puts the last events in ch, dropping the oldest events the
// consumer has not taken to make room.
func (c *Client) finish(ch chan wire.Event, last []wire.Event) {
	for _, ev := range last {
		for {
			select {
			case ch <- ev:
			default:
				select {
				case <-ch:
				default:
				}
				continue
			}
			break
		}
	}
}

// ending is how s's channel ends when the process went away (why) before
// the work's done: an error event saying so, and a done, both carrying
// the work's id as their prompt_id.
func (s *Stream) ending(why error) []wire.Event {
	e := &wire.ErrorEvent{Code: wire.CodeInternal, Message: s.Command + ": " + why.Error()}
	e.PromptID = s.ID
	d := &wire.DoneEvent{}
	d.PromptID = s.ID
	return []wire.Event{e, d}
}

// cancelWork aborts s's work, and only it (abort with its prompt_id):
// running it ends aborted, queued it is dropped, ended it is left alone.
func (c *Client) cancelWork(s *Stream) {
	_, _ = c.CancelWork(context.Background(), s.ID)
}

package rpcserver

import (
	"context"
	"errors"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// dispatch answers one valid, authorised command.
func (s *Server) dispatch(cmd wire.Command) {
	id := cmd.GetID()
	typ := cmd.Type()
	switch c := cmd.(type) {
	case *wire.HelloCommand:
		s.respond(id, typ, wire.HelloResult{
			ProtocolVersion: sdk.ProtocolVersion,
			Version:         sdk.Version,
			Provider:        s.rt.Provider(),
			Model:           s.rt.Model(),
		})
	case *wire.PingCommand:
		s.respond(id, typ, wire.PingResult{Pong: true})
	case *wire.PromptCommand:
		images := make([]sdk.Image, 0, len(c.Images))
		for i, img := range c.Images {
			data, err := sdk.DecodeImageData(img.Data)
			if err != nil {
				s.fail(id, typ, wire.CodeInvalidImage, "images[%d]: %s", i, oneLine(err))
				return
			}
			if _, err := sdk.CheckImage(img.MIMEType, data); err != nil {
				s.fail(id, typ, wire.CodeInvalidImage, "images[%d]: %s", i, oneLine(err))
				return
			}
			images = append(images, sdk.Image{MIMEType: img.MIMEType, Data: data})
		}
		if c.Message == "" && len(images) == 0 {
			s.fail(id, typ, wire.CodeInvalidParams, "prompt: message is empty and there are no images")
			return
		}
		text := c.Message
		s.enqueue(id, typ, func(ctx context.Context, sink func(sdk.Event)) error {
			return s.rt.PromptSink(ctx, text, images, sink, sdk.WithPromptID(id))
		})
	case *wire.CompactCommand:
		instructions := c.Instructions
		s.enqueue(id, typ, func(ctx context.Context, sink func(sdk.Event)) error {
			return s.rt.CompactSink(ctx, instructions, sink, sdk.WithPromptID(id))
		})
	case *wire.AbortCommand:
		s.mu.Lock()
		// Work whose done is already queued is no longer current: it is
		// not aborted, and the answer says so.
		aborted := s.current != nil
		var dropped []*job
		if c.All != nil && *c.All {
			dropped = s.queue
			s.queue = nil
		}
		// The answer is queued before the work is cancelled, and under
		// the lock that orders a job's done: the aborted work's ending and
		// the dropped work's endings always follow it.
		s.respond(id, typ, wire.AbortResult{Aborted: aborted, Dropped: int64(len(dropped))})
		if aborted {
			s.current.cancel()
		}
		s.dropLocked(dropped, "dropped from the queue by abort")
		s.mu.Unlock()
	case *wire.GetStateCommand:
		st := s.rt.State()
		s.mu.Lock()
		st.Busy = s.current != nil || len(s.queue) > 0
		q := int64(len(s.queue))
		s.mu.Unlock()
		st.Queued = &q
		s.respond(id, typ, st)
	case *wire.GetMessagesCommand:
		s.respond(id, typ, wire.MessagesResult{Messages: nonNilMessages(s.rt.Messages())})
	case *wire.ClearCommand:
		if s.busy() {
			s.fail(id, typ, wire.CodeBusy, "clear: a prompt or compact is running or queued")
			return
		}
		if err := s.rt.Clear(); err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, nil)
	case *wire.SetModelCommand:
		if s.busy() {
			s.fail(id, typ, wire.CodeBusy, "set_model: a prompt or compact is running or queued")
			return
		}
		if err := s.rt.SetModel(c.Model); err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, wire.SetModelResult{Model: s.rt.Model()})
	case *wire.GetModelsCommand:
		s.respond(id, typ, wire.ModelsResult{Models: s.rt.ListModels()})
	default:
		s.fail(id, typ, wire.CodeUnknownCommand, "unknown command %q", typ)
	}
}

func nonNilMessages(m []wire.Message) []wire.Message {
	if m == nil {
		return []wire.Message{}
	}
	return m
}

// failErr maps a Runtime error to its code.
func (s *Server) failErr(id wire.ID, typ string, err error) {
	var um *sdk.UnknownModelError
	switch {
	case errors.Is(err, sdk.ErrBusy):
		s.fail(id, typ, wire.CodeBusy, "%s", oneLine(err))
	case errors.As(err, &um):
		s.fail(id, typ, wire.CodeUnknownModel, "%s", oneLine(err))
	default:
		s.fail(id, typ, wire.CodeInternal, "%s", oneLine(err))
	}
}

// busy reports whether work runs or waits.
func (s *Server) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current != nil || len(s.queue) > 0
}

// enqueue answers a prompt or compact at once and queues its work. Work
// that can start now becomes current at once, so get_state reports it
// busy from the moment the client reads `started`.
func (s *Server) enqueue(id wire.ID, typ string, start func(context.Context, func(sdk.Event)) error) {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{id: id, ctx: ctx, cancel: cancel, start: start}
	s.mu.Lock()
	s.sent++
	j.n = s.sent
	if s.shuttingDown {
		s.mu.Unlock()
		cancel()
		s.fail(id, typ, wire.CodeInternal, "the server is shutting down")
		return
	}
	// The response is queued for writing before the worker can see the
	// job, so it always precedes the job's events.
	if s.current == nil && len(s.queue) == 0 {
		s.current = j
		s.respond(id, typ, wire.StartResult{Started: true})
	} else {
		s.queue = append(s.queue, j)
		queued, pos := true, int64(len(s.queue))
		s.respond(id, typ, wire.StartResult{Started: false, Queued: &queued, Position: &pos})
	}
	s.mu.Unlock()
	s.poke()
}

// worker runs jobs one at a time, in order: the current one, then the
// queue's head. A job stops being current the moment its done is queued
// (sendDone), while the worker may still be returning from it; the next
// job runs once it has. It returns when draining and nothing is left.
func (s *Server) worker() {
	for {
		s.mu.Lock()
		// At the top of the loop no job runs. Dropped jobs that came
		// before the current one (if any) end now, so every job ends in
		// the order it was sent: dropped ones are in that order too.
		n := 0
		for n < len(s.dropped) && (s.current == nil || s.dropped[n].n < s.current.n) {
			n++
		}
		if n > 0 {
			ending := s.dropped[:n:n]
			s.dropped = s.dropped[n:]
			s.mu.Unlock()
			for _, j := range ending {
				s.endDropped(j)
			}
			continue
		}
		j := s.current
		if j == nil && len(s.queue) > 0 {
			j = s.queue[0]
			s.queue = s.queue[1:]
			s.current = j
		}
		if j == nil {
			draining := s.draining
			s.mu.Unlock()
			if draining {
				return
			}
			<-s.wake
			continue
		}
		s.mu.Unlock()
		s.runJob(j)
		s.mu.Lock()
		if s.current == j { // the job ended without a done
			s.current = nil
		}
		s.mu.Unlock()
	}
}

// runJob runs one job in the worker's goroutine, writing its events as
// they happen; its done is written before the next job starts.
func (s *Server) runJob(j *job) {
	defer j.cancel()
	err := j.start(j.ctx, func(ev sdk.Event) {
		if _, last := ev.(*wire.DoneEvent); last {
			s.sendDone(j, ev)
			return
		}
		s.w.send(frame{ev: ev})
	})
	if err != nil {
		// The runtime refused (it cannot be busy: this worker serialises
		// all work). Report it as the job's error and end it.
		s.emit(&wire.ErrorEvent{Message: oneLine(err), Code: wire.CodeInternal}, j.id)
		s.sendDone(j, s.stamp(&wire.DoneEvent{}, j.id))
	}
}

// sendDone queues the job's done and ends the job in one step under the
// lock. A client that has read the done finds the server idle: the next
// prompt starts at once, clear and set_model are not busy. An abort
// answered at the same moment comes either before the done (and says
// aborted) or after it (and says not).
func (s *Server) sendDone(j *job, done wire.Event) {
	s.mu.Lock()
	if s.current == j {
		s.current = nil
	}
	s.w.send(frame{ev: done})
	s.mu.Unlock()
}

// emit writes an event the server makes itself.
func (s *Server) emit(ev wire.Event, promptID wire.ID) {
	s.w.send(frame{ev: s.stamp(ev, promptID)})
}

// stamp gives an event the server makes its seq and prompt_id.
func (s *Server) stamp(ev wire.Event, promptID wire.ID) wire.Event {
	ev.SetSeq(s.rt.NextSeq())
	ev.SetPromptID(promptID)
	return ev
}

// dropLocked hands dropped jobs to the worker, which ends each (in queue
// order) once the running job's done is written, so the endings of
// different jobs never interleave. The caller holds s.mu.
func (s *Server) dropLocked(jobs []*job, why string) {
	for _, j := range jobs {
		j.cancel()
		j.dropped = why
	}
	s.dropped = append(s.dropped, jobs...)
	if len(jobs) > 0 {
		s.poke()
	}
}

// endDropped ends a job that never ran, the way an aborted one ends.
func (s *Server) endDropped(j *job) {
	s.emit(&wire.TurnEndEvent{Stop: wire.StopAborted, Error: j.dropped}, j.id)
	s.emit(&wire.DoneEvent{}, j.id)
}

// abortAll cancels the running job and drops every queued one.
func (s *Server) abortAll(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shuttingDown = true
	if s.current != nil {
		s.current.cancel()
	}
	s.dropLocked(s.queue, why)
	s.queue = nil
}

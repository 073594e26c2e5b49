package rpcserver

import (
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// dispatchSteer answers steer, follow_up, inject_context and
// external_event; it reports whether cmd was one of them.
func (s *Server) dispatchSteer(cmd wire.Command, id wire.ID, typ string) bool {
	answer := func(res wire.StartResult) { s.respond(id, typ, res) }
	work := func() engine.Work { return engine.Work{ID: id, Sink: s.sink, Ready: s.w.Ready} }
	var err error
	switch c := cmd.(type) {
	case *wire.SteerCommand:
		w := work()
		w.Prompt = &engine.PromptInput{Text: c.Message}
		err = s.sess.Steer(w, answer)
	case *wire.FollowUpCommand:
		if c.Message == "" {
			s.fail(id, typ, wire.CodeInvalidParams, "follow_up: message is empty")
			return true
		}
		s.submit(id, typ, engine.Work{ID: id, Prompt: &engine.PromptInput{Text: c.Message}})
	case *wire.InjectContextCommand:
		var n int
		if n, err = s.sess.InjectContext(c.Text, c.Source); err == nil {
			s.respond(id, typ, wire.InjectContextResult{Pending: int64(n)})
		}
	case *wire.ExternalEventCommand:
		err = s.sess.ExternalEvent(work(), c.Source, c.Payload, answer)
	default:
		return false
	}
	if err != nil {
		s.failErr(id, typ, err)
	}
	return true
}

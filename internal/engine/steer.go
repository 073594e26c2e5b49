package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/sdk/wire"
)

// Steer adds w's prompt text to the running prompt at its next step
// boundary, answering accepted with steered before the steer can land.
// When no prompt runs (idle, or a compaction runs, or the running prompt
// has ended its last step) w is submitted as a prompt of its own, queued
// when busy, as Submit does. Past the inbox's bounds it fails with
// limit_exceeded.
func (s *Session) Steer(w Work, accepted func(wire.StartResult)) error {
	if w.Prompt == nil || w.Prompt.Text == "" {
		return wire.Sentinel(wire.CodeInvalidParams, "steer: the message is empty")
	}
	err := s.SteerRunning(w.Prompt.Text, func() {
		if accepted != nil {
			steered := true
			accepted(wire.StartResult{Steered: &steered})
		}
	})
	if !errors.Is(err, agent.ErrNotRunning) {
		return err
	}
	return s.Submit(w, Queue, accepted)
}

// SteerRunning hands text to the running prompt for its next step
// boundary, calling accepted (when not nil) before it can land. It returns
// agent.ErrNotRunning when no prompt runs that will still take it, and
// fails with limit_exceeded past the inbox's bounds.
func (s *Session) SteerRunning(text string, accepted func()) error {
	if text == "" {
		return wire.Sentinel(wire.CodeInvalidParams, "steer: the message is empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil || s.current.tally == nil || s.closed {
		return agent.ErrNotRunning
	}
	return s.inbox.Steer(text, accepted)
}

// InjectContext adds text from source ("client" when empty) to the next
// model call of the session, and returns how many contexts wait for it.
// Past the inbox's bounds it fails with limit_exceeded.
func (s *Session) InjectContext(text, source string) (int, error) {
	if source == "" {
		source = "client"
	}
	return s.inbox.Inject(text, source)
}

// ExternalEvent submits an event from source ("rpc" when empty) carrying
// payload as a prompt of its own, queued when busy. A string payload is
// given to the model as it is, anything else as JSON. At most
// agent.MaxInboxPending events wait at a time, each at most
// agent.MaxInboxText bytes; past either, limit_exceeded.
func (s *Session) ExternalEvent(w Work, source string, payload json.RawMessage, accepted func(wire.StartResult)) error {
	in, err := s.EventPrompt(source, payload)
	if err != nil {
		return err
	}
	w.Prompt = in
	return s.Submit(w, Queue, accepted)
}

// EventPrompt is the prompt an external event from source ("rpc" when
// empty) carrying payload runs as, for a door that submits it itself. It
// fails with invalid_params without a payload and limit_exceeded past the
// bounds ExternalEvent keeps.
func (s *Session) EventPrompt(source string, payload json.RawMessage) (*PromptInput, error) {
	if source == "" {
		source = "rpc"
	}
	if len(payload) == 0 || string(payload) == "null" {
		return nil, wire.Sentinel(wire.CodeInvalidParams, "external_event: the payload is missing")
	}
	if len(payload) > agent.MaxInboxText {
		return nil, wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("external_event: %d bytes is more than the %d a session takes", len(payload), agent.MaxInboxText))
	}
	body := string(payload)
	var str string
	if json.Unmarshal(payload, &str) == nil {
		body = str
	}
	s.mu.Lock()
	waiting := 0
	for _, j := range s.queue {
		if j.event {
			waiting++
		}
	}
	s.mu.Unlock()
	if waiting >= agent.MaxInboxPending {
		return nil, wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("external_event: %d already wait, the most a session holds", agent.MaxInboxPending))
	}
	return &PromptInput{Text: fmt.Sprintf("<external-event source=%q>\n%s\n</external-event>", source, body), Source: source}, nil
}

// ErrNotRunning is returned by SteerRunning when no prompt runs that would
// take a steer.
var ErrNotRunning = agent.ErrNotRunning

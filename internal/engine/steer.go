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
	s.mu.Lock()
	running := s.current != nil && s.current.tally != nil && !s.closed
	var err error
	if running {
		err = s.inbox.Steer(w.Prompt.Text, func() {
			if accepted != nil {
				steered := true
				accepted(wire.StartResult{Steered: &steered})
			}
		})
	}
	s.mu.Unlock()
	switch {
	case running && err == nil:
		return nil
	case running && !errors.Is(err, agent.ErrNotRunning):
		return err
	}
	return s.Submit(w, Queue, accepted)
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
	if source == "" {
		source = "rpc"
	}
	if len(payload) == 0 || string(payload) == "null" {
		return wire.Sentinel(wire.CodeInvalidParams, "external_event: the payload is missing")
	}
	if len(payload) > agent.MaxInboxText {
		return wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("external_event: %d bytes is more than the %d a session takes", len(payload), agent.MaxInboxText))
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
		return wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("external_event: %d already wait, the most a session holds", agent.MaxInboxPending))
	}
	w.Prompt = &PromptInput{Text: fmt.Sprintf("<external-event source=%q>\n%s\n</external-event>", source, body), Source: source}
	return s.Submit(w, Queue, accepted)
}

package agent

import (
	"errors"
	"fmt"

	"zot.dev/zot/internal/llm"
)

// TranscriptError is Validate's error: message Index (from 0) is where the
// transcript stops holding together.
type TranscriptError struct {
	Index int
	Err   error
}

func (e *TranscriptError) Error() string { return fmt.Sprintf("message %d: %v", e.Index, e.Err) }

// Unwrap returns the reason.
func (e *TranscriptError) Unwrap() error { return e.Err }

// Validate reports whether msgs is a transcript every provider accepts back:
// roles are user, assistant or tool; no message is empty; tool calls appear
// only in assistant messages and tool results only in tool messages; every
// assistant message with tool calls is followed directly by one tool
// message answering each of its calls exactly once, and every tool message
// answers the calls of the assistant message just before it. Its error
// is a *TranscriptError.
func Validate(msgs []llm.Message) error {
	for i := range msgs {
		m := &msgs[i]
		if len(m.Content) == 0 {
			return &TranscriptError{i, fmt.Errorf("the %s message is empty", m.Role)}
		}
		switch m.Role {
		case llm.RoleUser:
			if err := onlyKinds(m, false, false); err != nil {
				return &TranscriptError{i, err}
			}
		case llm.RoleAssistant:
			if err := onlyKinds(m, true, false); err != nil {
				return &TranscriptError{i, err}
			}
			calls := m.ToolCalls()
			if len(calls) == 0 {
				continue
			}
			if i+1 >= len(msgs) || msgs[i+1].Role != llm.RoleTool {
				return &TranscriptError{i, errors.New("its tool calls have no results")}
			}
			if err := answers(calls, &msgs[i+1]); err != nil {
				return &TranscriptError{i + 1, err}
			}
		case llm.RoleTool:
			if i == 0 || msgs[i-1].Role != llm.RoleAssistant || len(msgs[i-1].ToolCalls()) == 0 {
				return &TranscriptError{i, errors.New("tool results without the tool calls they answer")}
			}
		default:
			return &TranscriptError{i, fmt.Errorf("unknown role %q", m.Role)}
		}
	}
	return nil
}

// onlyKinds checks that m holds no tool results and, unless calls is true,
// no tool calls.
func onlyKinds(m *llm.Message, calls, results bool) error {
	for _, b := range m.Content {
		switch b.(type) {
		case *llm.ToolCallBlock:
			if !calls {
				return errors.New("tool call outside an assistant message")
			}
		case *llm.ToolResultBlock:
			if !results {
				return errors.New("tool result outside a tool message")
			}
		case nil:
			return errors.New("nil block")
		}
	}
	return nil
}

// answers checks that tool message m answers each of calls exactly once
// and nothing else.
func answers(calls []*llm.ToolCallBlock, m *llm.Message) error {
	want := make(map[string]bool, len(calls))
	for _, c := range calls {
		if want[c.ID] {
			return fmt.Errorf("tool call id %q is used twice", c.ID)
		}
		want[c.ID] = true
	}
	seen := make(map[string]bool, len(calls))
	for _, b := range m.Content {
		r, ok := b.(*llm.ToolResultBlock)
		if !ok {
			return errors.New("a tool message holds something other than tool results")
		}
		if !want[r.CallID] {
			return fmt.Errorf("result for unknown tool call %q", r.CallID)
		}
		if seen[r.CallID] {
			return fmt.Errorf("two results for tool call %q", r.CallID)
		}
		seen[r.CallID] = true
	}
	for _, c := range calls {
		if !seen[c.ID] {
			return fmt.Errorf("tool call %q has no result", c.ID)
		}
	}
	return nil
}

// appendMessage adds m to the transcript and returns its index.
func (a *Agent) appendMessage(m llm.Message) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.msgs = append(a.msgs, m)
	return len(a.msgs) - 1
}

// truncate drops the messages from index n on.
func (a *Agent) truncate(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n < len(a.msgs) {
		clear(a.msgs[n:])
		a.msgs = a.msgs[:n]
		a.gen++
	}
}

// TranscriptView returns the transcript without copying it, for a reader
// on the goroutine that runs the agent's work (or while no work runs)
// that is done with it before it returns: a session file's save, say. It
// is the snapshot below; Transcript gives everyone else a copy. gen is
// the transcript's version: it stays the same while messages are only
// appended, and changes with any other change (a message dropped, a
// compaction, Clear, SetTranscript).
func (a *Agent) TranscriptView() (msgs []llm.Message, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.msgs[:len(a.msgs):len(a.msgs)], a.gen
}

// snapshot returns the transcript for a model call or a compaction
// without copying it: the slice is capped at its length, so a message
// appended meanwhile goes past its end, and no message of the transcript
// is changed in place while a call the agent made is running (truncate
// and the rewrites run between calls, on the goroutine that made them;
// compaction and Clear give a.msgs a new array). Callers must not modify
// it; Transcript gives the outside a copy.
func (a *Agent) snapshot() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.msgs[:len(a.msgs):len(a.msgs)]
}

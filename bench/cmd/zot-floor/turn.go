package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxSteps bounds the model calls of one prompt.
const maxSteps = 8

// call is one tool call the model asked for.
type call struct {
	id, name string
	args     []byte
}

// reply is one model call's answer.
type reply struct {
	text  string
	calls []call
}

// toolOutput is the result of running one call.
type toolOutput struct {
	call    call
	text    string
	isError bool
}

// dialect is one provider's wire format.
type dialect interface {
	// userMessage is the first message of a prompt's transcript.
	userMessage(text string) any
	// newRequest builds the streaming request for a transcript.
	newRequest(ctx context.Context, ep endpoint, msgs []any) (*http.Request, error)
	// readStream reads a response stream to its end marker, passing each
	// piece of text to onText as it arrives.
	readStream(body io.Reader, onText func(string) error) (reply, error)
	// appendTurn adds the assistant's reply and the tool results to msgs.
	appendTurn(msgs []any, rep reply, outs []toolOutput) []any
}

// Events written during a prompt.
type (
	textDeltaEvent struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	}
	toolCallEvent struct {
		Type string         `json:"type"`
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args rawOrEmptyArgs `json:"args"`
	}
	toolResultEvent struct {
		Type    string      `json:"type"`
		ID      string      `json:"id"`
		IsError bool        `json:"is_error"`
		Content []textBlock `json:"content"`
	}
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	errorEvent struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	doneEvent struct {
		Type string `json:"type"`
	}
)

// rawOrEmptyArgs is a tool call's arguments as JSON, {} when there are none.
type rawOrEmptyArgs []byte

// MarshalJSON implements json.Marshaler.
func (a rawOrEmptyArgs) MarshalJSON() ([]byte, error) {
	if len(strings.TrimSpace(string(a))) == 0 {
		return []byte("{}"), nil
	}
	return a, nil
}

// prompt runs one prompt to its end: model calls and tool runs until the
// model stops asking for tools, then done. A failure becomes an error
// event; only a stdout failure is returned.
//
// Like any agent, the floor keeps the conversation: each prompt's request
// carries the earlier prompts and answers, so a session of sequential
// prompts costs what a real session costs.
func (r *relay) prompt(ctx context.Context, text string) error {
	msgs := append(r.history[:len(r.history):len(r.history)], r.dialect.userMessage(text))
	for range maxSteps {
		rep, err := r.modelCall(ctx, msgs)
		var werr *stdoutError
		if errors.As(err, &werr) {
			return err
		}
		if err != nil {
			if werr := r.write(errorEvent{Type: "error", Message: err.Error()}); werr != nil {
				return werr
			}
			break
		}
		if len(rep.calls) == 0 {
			r.history = r.dialect.appendTurn(msgs, rep, nil)
			break
		}
		outs := make([]toolOutput, 0, len(rep.calls))
		for _, c := range rep.calls {
			if err := r.write(toolCallEvent{Type: "tool_call", ID: c.id, Name: c.name, Args: c.args}); err != nil {
				return err
			}
			out := runTool(ctx, c)
			if err := r.write(toolResultEvent{Type: "tool_result", ID: c.id, IsError: out.isError,
				Content: []textBlock{{Type: "text", Text: out.text}}}); err != nil {
				return err
			}
			outs = append(outs, out)
		}
		msgs = r.dialect.appendTurn(msgs, rep, outs)
	}
	return r.write(doneEvent{Type: "done"})
}

// stdoutError marks a failure to write stdout inside a stream callback, so
// it is not mistaken for a provider error.
type stdoutError struct{ err error }

func (e *stdoutError) Error() string { return e.err.Error() }
func (e *stdoutError) Unwrap() error { return e.err }

// modelCall sends one request and relays its stream.
func (r *relay) modelCall(ctx context.Context, msgs []any) (reply, error) {
	req, err := r.dialect.newRequest(ctx, r.ep, msgs)
	if err != nil {
		return reply{}, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("calling provider: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return reply{}, fmt.Errorf("provider answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	rep, err := r.dialect.readStream(resp.Body, func(s string) error {
		if err := r.write(textDeltaEvent{Type: "text_delta", Delta: s}); err != nil {
			return &stdoutError{err}
		}
		return nil
	})
	if err != nil {
		return reply{}, fmt.Errorf("reading provider stream: %w", err)
	}
	// Drain what follows the end marker so the connection is reused.
	_, _ = io.Copy(io.Discard, resp.Body)
	return rep, nil
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// endpoint is where and as whom the relay calls the provider.
type endpoint struct {
	model, baseURL, apiKey string
}

// relay serves the NDJSON wire on one pair of pipes.
type relay struct {
	out     *bufio.Writer
	dialect dialect
	ep      endpoint
	client  *http.Client
	// history is the conversation so far: every finished prompt and its
	// final answer.
	history []any
}

func newRelay(stdout io.Writer, d dialect, ep endpoint) *relay {
	return &relay{
		out:     bufio.NewWriterSize(stdout, 64<<10),
		dialect: d,
		ep:      ep,
		client:  &http.Client{},
	}
}

// command is the part of a client command the relay reads.
type command struct {
	ID      json.RawMessage `json:"id"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
}

// response is the reply to one command.
type response struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id,omitempty"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
	Code    string          `json:"code,omitempty"`
}

// serve reads commands until stdin ends, answering each in turn; a prompt
// runs to its done before the next command is read.
func (r *relay) serve(ctx context.Context, stdin io.Reader) error {
	in := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if werr := r.handle(ctx, line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// handle answers one command line; it fails only when stdout does.
func (r *relay) handle(ctx context.Context, line []byte) error {
	var c command
	if err := json.Unmarshal(line, &c); err != nil {
		return r.write(response{Type: "response", Error: "malformed JSON: " + err.Error(), Code: "malformed_json"})
	}
	id := c.ID
	if string(id) == "null" {
		id = nil
	}
	switch c.Type {
	case "ping":
		return r.write(response{Type: "response", ID: id, Command: "ping", Success: true, Data: map[string]bool{"pong": true}})
	case "prompt":
		if err := r.write(response{Type: "response", ID: id, Command: "prompt", Success: true, Data: map[string]bool{"started": true}}); err != nil {
			return err
		}
		return r.prompt(ctx, c.Message)
	default:
		return r.write(response{Type: "response", ID: id, Command: c.Type, Error: fmt.Sprintf("unknown command %q", c.Type), Code: "unknown_command"})
	}
}

// write sends one line and flushes it, as a server must for its client to
// see each event when it happens.
func (r *relay) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %T: %w", v, err)
	}
	b = append(b, '\n')
	if _, err := r.out.Write(b); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	if err := r.out.Flush(); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/mcpclient"
	"zot.dev/zot/internal/tools"
)

// tool is one tool of an MCP server as the model sees it.
type tool struct {
	s      *server
	name   string // what the model calls it
	remote string // what the server calls it
	desc   string
	schema json.RawMessage
	// readOnly is the server's readOnlyHint: the tool changes nothing.
	readOnly bool
}

func newTool(s *server, name string, t *mcpclient.Tool) *tool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, s.spec.Name)
	}
	if len(desc) > MaxDescription {
		cut := MaxDescription
		for cut > 0 && !utf8.RuneStart(desc[cut]) {
			cut--
		}
		desc = desc[:cut] + "… [cut]"
	}
	return &tool{s: s, name: name, remote: t.Name, desc: desc, schema: schemaOf(t),
		readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint}
}

// ReadOnly implements tools.ReadOnly: the server's readOnlyHint. A hint
// from a server the user configured: it lets the tool run in a session's
// read-only mode, and nothing more.
func (t *tool) ReadOnly() bool { return t.readOnly }

// MaxDescription bounds the description of an MCP tool the model is
// given, in bytes, as other agents bound it: every request of the session
// carries every tool's description, so one server's long text would
// otherwise crowd the model's context at every turn.
const MaxDescription = 2048

// Name implements tools.Tool.
func (t *tool) Name() string { return t.name }

// Description implements tools.Tool.
func (t *tool) Description() string { return t.desc }

// Schema implements tools.Tool: the server's input schema as it gave it.
func (t *tool) Schema() json.RawMessage { return t.schema }

// Run implements tools.Tool: it calls the tool on the server, bounded by
// the server's call timeout. An abort (ctx ends) cancels the call, which
// tells the server with notifications/cancelled.
func (t *tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	c, err := t.s.acquire()
	if err != nil {
		return tools.Errorf(err.Error()), nil
	}
	defer t.s.calls.Done()
	limit := t.s.timeout()
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	token := ""
	if call.Progress != nil {
		var remove func()
		token, remove = t.s.m.progress.add(throttle(call.Progress, progressEvery))
		defer remove()
	}
	res, err := c.cs.CallTool(cctx, t.remote, orEmpty(call.Args), token)
	switch {
	case err == nil && res == nil:
		return tools.Errorf(fmt.Sprintf("MCP server %q answered the call with no result", t.s.spec.Name)), nil
	case err == nil:
		return mapResult(res), nil
	case ctx.Err() != nil:
		return tools.Result{}, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Errorf(fmt.Sprintf("MCP tool %s of server %q did not answer within %s; the call was cancelled", t.remote, t.s.spec.Name, limit)), nil
	case errors.Is(err, mcpclient.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// The first call to see a stdio server's end gets the end of its
		// output (EOF); the others, the closed connection.
		// Take the crash in before answering, so that the next prompt
		// finds the server crashed and restarts it.
		select {
		case <-c.gone:
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
		return tools.Errorf(fmt.Sprintf("MCP server %q went away during the call (%v); it is restarted at the next prompt if it crashed", t.s.spec.Name, err)), nil
	}
	return tools.Errorf(fmt.Sprintf("MCP server %q failed the call of %s: %v", t.s.spec.Name, t.remote, err)), nil
}

// orEmpty returns args, or an empty object when there are none.
func orEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	return args
}

// progressEvery is the least time between two progress updates of one
// call that reach the model's client; a server that reports faster has
// the updates in between dropped.
const progressEvery = 50 * time.Millisecond

// throttle returns fn, dropping calls that come within every of the last
// one passed on.
func throttle(fn func(string), every time.Duration) func(string) {
	var (
		mu   sync.Mutex
		last time.Time
	)
	return func(s string) {
		mu.Lock()
		now := time.Now()
		if !last.IsZero() && now.Sub(last) < every {
			mu.Unlock()
			return
		}
		last = now
		mu.Unlock()
		fn(s)
	}
}

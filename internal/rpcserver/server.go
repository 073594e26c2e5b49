// Package rpcserver serves the `zot rpc` protocol: newline-delimited JSON
// commands on one stream, responses and events on another, over an
// sdk.Runtime. The protocol is defined in schema/ and documented in
// docs/rpc.md.
package rpcserver

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// DefaultMaxLineBytes is the default limit on one input line.
const DefaultMaxLineBytes = 64 << 20

// Options configures a Server.
type Options struct {
	// Token, when not empty, must be presented by a hello command before
	// anything else; a wrong or missing token ends the session.
	Token string
	// MaxLineBytes bounds one input line; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// Log receives diagnostics (never protocol frames); nil discards them.
	Log io.Writer
	// ValidateOutput checks every frame against the schema before it is
	// written and reports a broken one to Log (`ZOT_VALIDATE=1`).
	ValidateOutput bool
}

// ErrUnauthorized is returned by Serve when the client failed to
// authenticate; the caller exits with status 1.
var ErrUnauthorized = errors.New("client failed to authenticate")

// Server serves one client over one Runtime.
type Server struct {
	rt   *sdk.Runtime
	opts Options
	w    *writer

	mu      sync.Mutex
	queue   []*job // waiting, in order
	current *job   // running, from dequeue until its done is queued
	// dropped were taken out of the queue by an abort; the worker ends
	// them, in send order, before any job sent after them runs.
	dropped  []*job
	sent     int // jobs numbered so far
	wake     chan struct{}
	authed   bool
	draining bool
	// shuttingDown refuses new work once Serve is ending.
	shuttingDown bool

	stopReading atomic.Bool // set at shutdown: lines read later are ignored
}

// job is one queued prompt or compaction.
type job struct {
	id     wire.ID
	ctx    context.Context
	cancel context.CancelFunc
	start  func(ctx context.Context, sink func(sdk.Event)) error
	// dropped, when not empty, says why the job was dropped unrun.
	dropped string
	// n numbers jobs in the order they were sent, from 1.
	n int
}

// New returns a Server for rt.
func New(rt *sdk.Runtime, opts Options) *Server {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Server{rt: rt, opts: opts, wake: make(chan struct{}, 1), authed: opts.Token == ""}
}

// Serve reads commands from in and writes frames to out until in ends,
// ctx is cancelled, or the client fails to authenticate. At the end of
// input it finishes the running and queued work first. When ctx is
// cancelled it aborts the running work, drops the queue (each dropped
// item still gets its done) and returns ctx's error.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.w = newWriter(out, s.opts.Log, s.opts.ValidateOutput)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.w.run() }()
	defer s.w.close()

	workerDone := make(chan struct{})
	go func() { defer close(workerDone); s.worker() }()

	// The reader answers each line itself, in order; Serve waits for it,
	// or for ctx.
	readDone := make(chan error, 1)
	go func() { readDone <- s.read(in) }()

	var result error
	select {
	case err := <-readDone:
		switch {
		case errors.Is(err, ErrUnauthorized):
			result = err
			s.abortAll("client failed to authenticate")
		case err != nil:
			fmt.Fprintf(s.opts.Log, "zot: reading commands: %v\n", err)
		}
	case <-ctx.Done():
		result = ctx.Err()
		s.stopReading.Store(true)
		s.abortAll("the server is shutting down")
	}
	// Let the worker finish what is queued (after EOF), or what is left
	// after an abort, then stop it.
	s.mu.Lock()
	s.draining = true // the worker stops once the queue is empty
	s.mu.Unlock()
	s.poke()
	// A signal while the last work drains (after the end of input) still
	// aborts it.
	select {
	case <-workerDone:
	case <-ctx.Done():
		if result == nil {
			result = ctx.Err()
		}
		s.abortAll("the server is shutting down")
		<-workerDone
	}
	s.w.close()
	wg.Wait()
	return result
}

// read answers lines until the end of input, a failed authentication
// (ErrUnauthorized) or shutdown. A reader blocked on in when Serve returns
// ends when in is closed.
func (s *Server) read(in io.Reader) error {
	lr := newLineReader(in, s.opts.MaxLineBytes)
	for {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			line, err = tooLongMarker, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if s.stopReading.Load() {
			return nil
		}
		if err := s.handle(line); err != nil {
			return err
		}
	}
}

// tooLongMarker stands for a line that was over the limit.
var tooLongMarker = []byte{0}

func (s *Server) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// respond writes a success response.
func (s *Server) respond(id wire.ID, command string, data interface{ AppendJSON([]byte) []byte }) {
	r := &wire.Response{ID: id, Command: command, Success: true}
	if data != nil {
		r.Data = data.AppendJSON(nil)
	}
	s.w.send(frame{resp: r})
}

// fail writes a failure response.
func (s *Server) fail(id wire.ID, command string, code wire.ErrorCode, format string, args ...any) {
	s.w.send(frame{resp: &wire.Response{ID: id, Command: command, Error: fmt.Sprintf(format, args...), Code: code}})
}

// envelope is what can be read from any command line, however broken.
type envelope struct {
	ID   json.RawMessage `json:"id"`
	Type json.RawMessage `json:"type"`
}

// handle answers one line. It returns ErrUnauthorized when the session
// must end.
func (s *Server) handle(line []byte) error {
	if len(line) == 1 && line[0] == 0 && &line[0] == &tooLongMarker[0] {
		s.fail(wire.ID{}, "", wire.CodeLineTooLong, "line longer than %d bytes; skipped up to its newline", s.opts.MaxLineBytes)
		return s.authGate("")
	}
	if len(line) == 0 || isBlank(line) {
		return nil
	}
	if !utf8.Valid(line) {
		s.fail(wire.ID{}, "", wire.CodeInvalidUTF8, "line is not valid UTF-8")
		return s.authGate("")
	}
	// The common case costs one decode and one validation; a line that
	// does not decode is taken apart again only to say why.
	cmd, err := wire.DecodeCommand(line)
	if err != nil {
		id, typ, code, msg := classify(line, err)
		s.fail(id, typ, code, "%s", msg)
		return s.authGate(typ)
	}
	id, typ := cmd.GetID(), cmd.Type()
	if err := wire.ValidateCommand(line); err != nil {
		s.fail(id, typ, wire.CodeInvalidParams, "%s: %s", typ, oneLine(err))
		return s.authGate(typ)
	}
	if !s.authed {
		hello, ok := cmd.(*wire.HelloCommand)
		if !ok {
			s.failSync(id, typ, wire.CodeAuthRequired, "authentication required: send hello with the token first")
			return ErrUnauthorized
		}
		if subtle.ConstantTimeCompare([]byte(hello.Token), []byte(s.opts.Token)) != 1 {
			s.failSync(id, typ, wire.CodeInvalidToken, "invalid token")
			return ErrUnauthorized
		}
		s.authed = true
	}
	s.dispatch(cmd)
	return nil
}

// classify says why a line did not decode as a command: the id and type
// to answer with (when they can be read) and the error code and text.
func classify(line []byte, decodeErr error) (wire.ID, string, wire.ErrorCode, string) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return wire.ID{}, "", wire.CodeMalformedJSON, "invalid JSON: " + oneLine(err)
	}
	var typ string
	if len(env.Type) > 0 {
		_ = json.Unmarshal(env.Type, &typ)
	}
	var id wire.ID
	if err := id.UnmarshalJSON(nonNil(env.ID)); err != nil {
		return wire.ID{}, typ, wire.CodeInvalidParams, "id must be a string or a number"
	}
	switch {
	case typ == "":
		return id, "", wire.CodeInvalidParams, `missing or empty string field "type"`
	case wire.NewCommand(typ) == nil:
		return id, typ, wire.CodeUnknownCommand, fmt.Sprintf("unknown command %q", typ)
	}
	// The schema's account of what is wrong is the most useful one.
	if err := wire.ValidateCommand(line); err != nil {
		return id, typ, wire.CodeInvalidParams, typ + ": " + oneLine(err)
	}
	return id, typ, wire.CodeInvalidParams, oneLine(decodeErr)
}

// authGate ends an unauthenticated session after a bad first line.
func (s *Server) authGate(typ string) error {
	if s.authed {
		return nil
	}
	s.failSync(wire.ID{}, typ, wire.CodeAuthRequired, "authentication required: send hello with the token first")
	return ErrUnauthorized
}

// failSync writes a failure and waits until it is on the output.
func (s *Server) failSync(id wire.ID, command string, code wire.ErrorCode, msg string) {
	s.w.sendSync(frame{resp: &wire.Response{ID: id, Command: command, Error: msg, Code: code}})
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func nonNil(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// oneLine renders an error on one line.
func oneLine(err error) string {
	msg := err.Error()
	for i := 0; i < len(msg); i++ {
		if msg[i] == '\n' || msg[i] == '\r' {
			b := []byte(msg)
			for j := range b {
				if b[j] == '\n' || b[j] == '\r' {
					b[j] = ' '
				}
			}
			return string(b)
		}
	}
	return msg
}

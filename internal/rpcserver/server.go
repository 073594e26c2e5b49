// Package rpcserver serves the `zot rpc` protocol: newline-delimited JSON
// commands on one stream, responses and events on another, over one
// engine Session. It is a thin door: it reads lines, decodes and checks
// them, and maps each command to a Session call; queueing, abort and the
// order of endings are the Session's. The protocol is defined in schema/
// and documented in docs/rpc.md.
package rpcserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/internal/wirecodec"
	"zot.dev/zot/sdk/wire"
)

// DefaultMaxLineBytes is the default limit on one input line.
const DefaultMaxLineBytes = ndjson.DefaultMaxLine

// DefaultFlushTimeout bounds how long Serve, as it ends, waits for the
// client to take the output still queued.
const DefaultFlushTimeout = 10 * time.Second

// SignalFlushTimeout bounds the same wait when Serve ends because its
// context was cancelled (a signal).
const SignalFlushTimeout = 2 * time.Second

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
	// FlushTimeout bounds the wait, as Serve ends, for a client that does
	// not read what is still queued for it; 0 means DefaultFlushTimeout.
	FlushTimeout time.Duration
	// Sessions opens the session store that list_sessions, load_session
	// and fork_session use, at the first of them; nil: those commands are
	// refused (invalid_params).
	Sessions func() (*store.Store, error)
	// Tap, when set, sees every line read (in, before it is handled) and
	// every frame written (out, on the writer's goroutine, before it is
	// written): a traffic inspector. It must return at once and not keep
	// the slice. nil costs a nil check per frame.
	Tap func(in bool, frame []byte)
}

// ErrUnauthorized is returned by Serve when the client failed to
// authenticate; the caller exits with status 1.
var ErrUnauthorized = errors.New("client failed to authenticate")

// Server serves one client over one Session.
type Server struct {
	sess     *engine.Session
	opts     Options
	w        *ndjson.Writer
	authed   bool
	tokenSum [sha256.Size]byte // of Options.Token

	// ignored holds the command members already logged as ignored, by
	// command and path, so that each is logged once.
	ignored map[string]bool

	stopReading atomic.Bool // set at shutdown: lines read later are ignored
	childEvents atomic.Bool // the client's hello asked for child_event

	ext extDoor // the extensions' commands and notices (extensions.go)
}

// New returns a Server for sess.
func New(sess *engine.Session, opts Options) *Server {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = DefaultFlushTimeout
	}
	return &Server{sess: sess, opts: opts, authed: opts.Token == "", tokenSum: sha256.Sum256([]byte(opts.Token)), ignored: map[string]bool{}}
}

// Serve reads commands from in and writes frames to out until in ends,
// ctx is cancelled, or the client fails to authenticate. At the end of
// input it finishes the running and queued work first. When ctx is
// cancelled it aborts the running work, drops the queue (each dropped
// item still gets its done) and returns ctx's error. A reader blocked on
// in when Serve returns ends when in is closed.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	wopts := ndjson.WriterOptions{Log: s.opts.Log, CloseOnCancel: true}
	if s.opts.ValidateOutput {
		wopts.Check = func(frame []byte) error {
			if err := wire.ValidateFrame(frame); err != nil {
				return fmt.Errorf("zot: outbound frame breaks the schema: %w: %s", err, frame)
			}
			return nil
		}
	}
	if see := s.opts.Tap; see != nil {
		check := wopts.Check
		wopts.Check = func(frame []byte) error {
			see(false, frame)
			if check != nil {
				return check(frame)
			}
			return nil
		}
	}
	s.w = ndjson.NewWriter(out, wopts)
	s.serveExtensions() // extensions.go

	// The reader answers each line itself, in order.
	readDone := make(chan error, 1)
	go func() { readDone <- s.read(ctx, in) }()

	var result error
	select {
	case err := <-readDone:
		// No answer to a permission request can come any more: the work
		// runs on without waiting for one.
		s.sess.EndApprovals("the client closed its input")
		// Nor to a call of the client's tools: those waiting fail now.
		s.sess.DropClientTools(rpcClient, "the client closed its input")
		switch {
		case errors.Is(err, ErrUnauthorized):
			result = err
			s.sess.Shutdown("client failed to authenticate")
		case err != nil:
			// The input is broken: nothing more can be asked for, so the
			// work stops rather than runs on unattended.
			result = fmt.Errorf("reading commands: %w", err)
			s.sess.Shutdown("reading commands failed")
		default:
			// The end of input: the extension commands read before it
			// are answered as if it were open (the prompts they submit
			// then run with the rest of the work).
			s.ext.drain(ctx)
		}
	case <-ctx.Done():
		result = ctx.Err()
		s.stopReading.Store(true)
		s.sess.Shutdown("the server is shutting down")
	}
	// Let the running and queued work finish (after the end of input), or
	// end (after an abort). A signal meanwhile still aborts it.
	if err := s.sess.Wait(ctx); err != nil {
		if result == nil {
			result = err
		}
		s.sess.Shutdown("the server is shutting down")
		_ = s.sess.Wait(context.Background())
	}
	// After a signal, what is left is written only briefly: whoever sent
	// it wants zot gone, and a client that stopped reading must not keep
	// it alive.
	s.ext.stop() // extension commands still waiting are cancelled and answered
	flush := s.opts.FlushTimeout
	if ctx.Err() != nil {
		flush = min(flush, SignalFlushTimeout)
	}
	flushCtx, cancel := context.WithTimeout(context.Background(), flush)
	defer cancel()
	if err := s.w.Close(flushCtx); err != nil && result == nil && !errors.Is(err, ndjson.ErrClosed) {
		fmt.Fprintf(s.opts.Log, "zot: writing output: %v\n", err)
	}
	return result
}

// read answers lines until the end of input, a failed authentication
// (ErrUnauthorized) or shutdown.
func (s *Server) read(ctx context.Context, in io.Reader) error {
	lr := ndjson.NewReader(in, s.opts.MaxLineBytes)
	for {
		line, err := lr.Next()
		if errors.Is(err, ndjson.ErrLineTooLong) {
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
		if s.opts.Tap != nil && !isTooLong(line) {
			s.opts.Tap(true, line)
		}
		// A client that does not read its output stops being read from
		// once enough is queued for it.
		_ = s.w.Wait(ctx)
		long := len(line) >= longLine
		if long {
			// The smaller buffers the line grew through are garbage now.
			debug.FreeOSMemory()
		}
		err = s.handle(line)
		if long {
			// The command holds what it needs; the line itself is garbage.
			line = nil
			lr.Release()
			debug.FreeOSMemory()
		}
		if err != nil {
			return err
		}
	}
}

// longLine is the length from which reading a line gives the memory it
// leaves behind back to the system at once: the buffers it grew through
// before it is decoded, and its own once it is. A long-lived process that
// once took a 64 MiB prompt does not keep holding it three times over,
// and its peak stays near the line and the text decoded from it. A
// collection costs little next to the line (a few milliseconds, while
// the line itself took hundreds to arrive and decode).
const longLine = 8 << 20

// tooLongMarker stands for a line that was over the limit.
var tooLongMarker = []byte{0}

// isTooLong says whether line stands for a line over the limit.
func isTooLong(line []byte) bool {
	return len(line) == 1 && line[0] == 0 && &line[0] == &tooLongMarker[0]
}

// respond writes a success response.
func (s *Server) respond(id wire.ID, command string, data interface{ AppendJSON([]byte) []byte }) {
	r := &wire.Response{ID: id, Command: command, Success: true}
	if data != nil {
		r.Data = data.AppendJSON(nil)
	}
	s.w.Send(r)
}

// fail writes a failure response.
func (s *Server) fail(id wire.ID, command string, code wire.ErrorCode, format string, args ...any) {
	s.w.Send(&wire.Response{ID: id, Command: command, Error: fmt.Sprintf(format, args...), Code: code})
}

// envelope is what can be read from any command line, however broken.
type envelope struct {
	ID   json.RawMessage `json:"id"`
	Type json.RawMessage `json:"type"`
}

// handle answers one line. It returns ErrUnauthorized when the session
// must end.
func (s *Server) handle(line []byte) error {
	if isTooLong(line) {
		return s.refuse(wire.ID{}, "", wire.CodeLineTooLong, fmt.Sprintf("line longer than %d bytes; skipped up to its newline", s.opts.MaxLineBytes))
	}
	if len(line) == 0 || isBlank(line) {
		return nil
	}
	if !utf8.Valid(line) {
		return s.refuse(wire.ID{}, "", wire.CodeInvalidUTF8, "line is not valid UTF-8")
	}
	// The common case costs one generic decode (to check the line and
	// find what it holds that the command does not define) and one typed
	// decode; a line that fails is taken apart again only to say why.
	cmd, ignored, err := wire.ReadCommand(line)
	if err != nil {
		id, typ, code, msg := classify(line, err)
		return s.refuse(id, typ, code, msg)
	}
	id, typ := cmd.GetID(), cmd.Type()
	s.logIgnored(typ, ignored)
	if hello, ok := cmd.(*wire.HelloCommand); ok && s.opts.Token != "" {
		// A hello after authentication must carry the token too: a client
		// that presents a wrong one is refused (and stays authenticated).
		if !s.tokenMatches(hello.Token) {
			if !s.authed {
				s.failSync(id, typ, wire.CodeInvalidToken, "invalid token")
				return ErrUnauthorized
			}
			s.fail(id, typ, wire.CodeInvalidToken, "invalid token")
			return nil
		}
		s.authed = true
	}
	if !s.authed {
		s.failSync(id, typ, wire.CodeAuthRequired, "authentication required: send hello with the token first")
		return ErrUnauthorized
	}
	s.dispatch(cmd, id, typ)
	return nil
}

// logIgnored writes to the log, once per command and member, the members
// of a command that zot ignored: a newer client's, or a typo.
func (s *Server) logIgnored(typ string, paths []string) {
	for _, p := range paths {
		key := typ + "\x00" + p
		if s.ignored[key] {
			continue
		}
		s.ignored[key] = true
		fmt.Fprintf(s.opts.Log, "zot: %s: ignoring unknown field %q (a newer client's, or a typo?); said once\n", typ, p)
	}
}

// refuse answers a line that is not a valid command, with exactly one
// response. Before authentication that response is auth_required (saying
// what was wrong with the line) and the session ends.
func (s *Server) refuse(id wire.ID, typ string, code wire.ErrorCode, msg string) error {
	if s.authed {
		s.fail(id, typ, code, "%s", msg)
		return nil
	}
	s.failSync(id, typ, wire.CodeAuthRequired, "authentication required: send hello with the token first (this line: "+msg+")")
	return ErrUnauthorized
}

// tokenMatches compares a presented token with the expected one in
// constant time. Both are hashed first, so neither the comparison's time
// nor an early length check says anything about the token's length.
func (s *Server) tokenMatches(presented string) bool {
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], s.tokenSum[:]) == 1
}

// classify says why a line could not be read as a command: the id and
// type to answer with (when they can be read) and the error code and text.
func classify(line []byte, readErr error) (wire.ID, string, wire.ErrorCode, string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return wire.ID{}, "", wire.CodeMalformedJSON, "invalid JSON: " + oneLine(err)
	}
	if kind := wirecodec.JSONKind(line); kind != "object" {
		return wire.ID{}, "", wire.CodeMalformedJSON, "a command must be a JSON object, got " + kind
	}
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
	return id, typ, wire.CodeInvalidParams, oneLine(readErr)
}

// failSync writes a failure and waits until it is on the output.
func (s *Server) failSync(id wire.ID, command string, code wire.ErrorCode, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.FlushTimeout)
	defer cancel()
	_ = s.w.SendSync(ctx, &wire.Response{ID: id, Command: command, Error: msg, Code: code})
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

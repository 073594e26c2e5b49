package ext

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/sdk/extwire"
)

// errShutdown is the cause of the handlers' contexts once the host asked
// the extension to stop.
var errShutdown = errors.New("ext: the host shut the extension down")

// CancelledError is the cause ([context.Cause]) of a handler's context
// when the host cancelled its request.
type CancelledError struct {
	// Reason is the host's: "timeout" or "aborted".
	Reason string
}

// Error says that the host cancelled the request, and why.
func (e *CancelledError) Error() string { return "ext: the host cancelled the request: " + e.Reason }

// session is one run of an extension: its writer, its requests in flight
// and the goroutine that handles one-way frames in order.
type session struct {
	e   *Extension
	ctx context.Context // ends when the run ends; handlers derive from it
	out *ndjson.Writer

	acked chan struct{} // closed when hello_ack arrived

	// announced is the subscribe sent with hello, before the Init
	// functions ran (nil when there was none).
	announced *extwire.SubscribeFrame

	mu       sync.Mutex
	inflight map[string]*call
	handlers sync.WaitGroup

	// The ordered queue of events, panel keys and panel closes.
	qmu    sync.Mutex
	queue  []func(context.Context)
	qwake  chan struct{}
	qdone  chan struct{}
	closed bool
}

// Run serves the host on stdin and stdout until the host shuts the
// extension down (nil), stdin ends (nil), ctx ends (ctx's cause) or a
// write fails. It may be called once.
//
// When Run returns early for ctx, the goroutine reading stdin may still be
// blocked in its read: it ends with the process, which Run's caller is
// expected to end.
func (e *Extension) Run(ctx context.Context) error {
	return e.serve(ctx, os.Stdin, os.Stdout, false)
}

// Serve is Run on in and out instead of stdin and stdout; tests and
// in-process hosts use it. When Serve returns before in ended and in is
// an io.Closer, Serve closes it and waits for its reader to end.
func (e *Extension) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	return e.serve(ctx, in, out, true)
}

// line is one line read from the host, or how reading ended.
type line struct {
	data []byte
	err  error
}

func (e *Extension) serve(parent context.Context, in io.Reader, out io.Writer, waitReader bool) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	s := &session{
		e:        e,
		ctx:      ctx,
		out:      ndjson.NewWriter(out, ndjson.WriterOptions{CloseOnCancel: true}),
		acked:    make(chan struct{}),
		inflight: map[string]*call{},
		qwake:    make(chan struct{}, 1),
		qdone:    make(chan struct{}),
	}
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return ErrAlreadyRunning
	}
	e.started, e.sess = true, s
	// sends_ready: the host waits for the ready sent after the Init
	// functions, however long they take (up to its start timeout).
	sendsReady := true
	hello := &extwire.HelloFrame{Name: e.name, Version: e.version, Capabilities: e.capabilitiesLocked(), SendsReady: &sendsReady}
	s.out.Send(hello)
	for _, f := range e.regs {
		s.out.Send(f)
	}
	e.regs = nil
	// The subscriptions made before Run go out now, with hello; what the
	// Init functions add goes out after them, before ready.
	if sub := e.subscribeLocked(); sub != nil {
		s.out.Send(sub)
		s.announced = sub
	}
	e.mu.Unlock()

	lines := make(chan line)
	stopRead := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		lr := ndjson.NewReader(in, 0)
		for {
			data, err := lr.Next()
			if errors.Is(err, ndjson.ErrLineTooLong) {
				e.Logf("skipped a frame over %d bytes from the host", ndjson.DefaultMaxLine)
				continue
			}
			if data != nil {
				data = append([]byte(nil), data...)
			}
			select {
			case lines <- line{data: data, err: err}:
			case <-stopRead:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	go s.runQueue()

	err := s.loop(lines)

	// Wind down: handlers see their contexts end, the ordered queue stops,
	// and the writer flushes what they sent before.
	cancel(errShutdown)
	s.closeQueue()
	<-s.qdone
	s.handlers.Wait()
	e.mu.Lock()
	e.sess, e.live = nil, false
	e.mu.Unlock()
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
	werr := s.out.Close(cctx)
	ccancel()
	close(stopRead)
	if waitReader {
		if c, ok := in.(io.Closer); ok {
			select {
			case <-readerDone:
			default:
				_ = c.Close()
			}
		}
		<-readerDone
	}
	if err == nil && werr != nil && !errors.Is(werr, ndjson.ErrClosed) {
		err = fmt.Errorf("ext: writing to the host: %w", werr)
	}
	return err
}

// loop reads the host's frames and acts on them until the run ends.
func (s *session) loop(lines <-chan line) error {
	e := s.e
	for {
		var l line
		select {
		case l = <-lines:
		case <-s.ctx.Done():
			return context.Cause(s.ctx)
		}
		if l.err != nil {
			if errors.Is(l.err, io.EOF) {
				return nil // the host closed stdin: it is gone or stopping us
			}
			return fmt.Errorf("ext: reading from the host: %w", l.err)
		}
		if len(l.data) == 0 {
			continue
		}
		f, err := extwire.DecodeHostFrame(l.data)
		if err != nil {
			e.Logf("skipped a frame from the host: %v", err)
			continue
		}
		if _, ok := f.(*extwire.ShutdownFrame); ok {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.out.SendSync(cctx, &extwire.ShutdownAckFrame{})
			cancel()
			return nil
		}
		select {
		case <-s.acked:
		default:
			ack, ok := f.(*extwire.HelloAckFrame)
			if !ok {
				e.Logf("skipped a %s frame that came before hello_ack", f.Type())
				continue
			}
			if err := s.start(ack); err != nil {
				return err
			}
			continue
		}
		s.dispatch(f)
	}
}

// start takes in hello_ack, runs the Init functions and says ready.
func (s *session) start(ack *extwire.HelloAckFrame) error {
	e := s.e
	e.mu.Lock()
	e.host = hostInfo(ack)
	inits := append([]func(context.Context, HostInfo) error(nil), e.inits...)
	host := e.host
	e.mu.Unlock()
	close(s.acked)
	for _, fn := range inits {
		if err := fn(s.ctx, host); err != nil {
			return fmt.Errorf("ext: init: %w", err)
		}
	}
	e.mu.Lock()
	for _, f := range e.regs {
		s.out.Send(f)
	}
	e.regs = nil
	if sub := e.subscribeLocked(); !sameSubscribe(sub, s.announced) {
		if sub == nil {
			sub = &extwire.SubscribeFrame{Events: []extwire.EventName{}}
		}
		s.out.Send(sub)
	}
	s.out.Send(&extwire.ReadyFrame{})
	e.live = true
	e.mu.Unlock()
	return nil
}

// dispatch acts on one frame after hello_ack.
func (s *session) dispatch(f extwire.HostFrame) {
	e := s.e
	switch f := f.(type) {
	case *extwire.ToolCallFrame:
		e.mu.Lock()
		fn := e.tools[f.Name]
		e.mu.Unlock()
		s.request(f.ID, func(ctx context.Context) extwire.ExtensionFrame {
			if fn == nil {
				return ToolError("extension %s has no tool %q", e.name, f.Name).frame(f.ID)
			}
			return fn(ctx, f.Args).frame(f.ID)
		}, func(p any) extwire.ExtensionFrame {
			return ToolError("extension %s: tool %s panicked: %v", e.name, f.Name, p).frame(f.ID)
		})
	case *extwire.CommandInvokedFrame:
		e.mu.Lock()
		fn := e.commands[f.Name]
		e.mu.Unlock()
		s.request(f.ID, func(ctx context.Context) extwire.ExtensionFrame {
			if fn == nil {
				return CommandError("extension %s has no command %q", e.name, f.Name).frame(f.ID)
			}
			return fn(ctx, f.Args).frame(f.ID)
		}, func(p any) extwire.ExtensionFrame {
			return CommandError("extension %s: command %s panicked: %v", e.name, f.Name, p).frame(f.ID)
		})
	case *extwire.EventInterceptFrame:
		s.request(f.ID, func(ctx context.Context) extwire.ExtensionFrame { return s.intercept(ctx, f) },
			func(p any) extwire.ExtensionFrame {
				return verdict(f.ID, true, fmt.Sprintf("extension %s: its %s guard panicked: %v", e.name, f.Event, p))
			})
	case *extwire.CancelFrame:
		s.mu.Lock()
		c := s.inflight[f.ID]
		s.mu.Unlock()
		if c != nil {
			c.cancel(&CancelledError{Reason: f.Reason})
		}
	case *extwire.EventFrame:
		e.mu.Lock()
		fns := append([]EventFunc(nil), e.events[f.Event]...)
		e.mu.Unlock()
		if len(fns) == 0 {
			return
		}
		s.enqueue(func(ctx context.Context) {
			for _, fn := range fns {
				s.safely("event "+string(f.Event), func() { fn(ctx, f) })
			}
		})
	case *extwire.PanelKeyFrame:
		e.mu.Lock()
		fn := e.panelKey
		e.mu.Unlock()
		if fn == nil {
			return
		}
		key := PanelKey{PanelID: f.PanelID, Key: f.Key, Text: f.Text}
		s.enqueue(func(ctx context.Context) { s.safely("panel key", func() { fn(ctx, key) }) })
	case *extwire.HostPanelCloseFrame:
		e.mu.Lock()
		fn := e.panelClose
		e.mu.Unlock()
		if fn == nil {
			return
		}
		id := f.PanelID
		s.enqueue(func(ctx context.Context) { s.safely("panel close", func() { fn(ctx, id) }) })
	case *extwire.HelloAckFrame:
		e.Logf("ignored a second hello_ack")
	}
}

// intercept answers an event_intercept with the hook for its event; an
// event without a hook is allowed.
func (s *session) intercept(ctx context.Context, f *extwire.EventInterceptFrame) extwire.ExtensionFrame {
	e := s.e
	e.mu.Lock()
	onTool, onTurn, onMessage := e.onTool, e.onTurn, e.onMessage
	e.mu.Unlock()
	switch f.Event {
	case extwire.InterceptEventToolCall:
		if onTool != nil {
			d := onTool(ctx, ToolCall{ID: f.ToolID, Name: f.ToolName, Args: f.ToolArgs})
			r := verdict(f.ID, d.Block, d.Reason)
			if !d.Block {
				r.ModifiedArgs = d.ModifiedArgs
			}
			return r
		}
	case extwire.InterceptEventTurnStart:
		if onTurn != nil {
			step := 0
			if f.Step != nil {
				step = int(*f.Step)
			}
			d := onTurn(ctx, step)
			return verdict(f.ID, d.Block, d.Reason)
		}
	case extwire.InterceptEventAssistantMessage:
		if onMessage != nil {
			d := onMessage(ctx, f.Text)
			r := verdict(f.ID, d.Block, d.Reason)
			if !d.Block {
				r.ReplaceText = d.ReplaceText
			}
			return r
		}
	}
	return verdict(f.ID, false, "")
}

// call is a request in flight.
type call struct{ cancel context.CancelCauseFunc }

// request runs a handler for the request id on a goroutine of its own
// and sends its answer, unless the request was cancelled meanwhile.
func (s *session) request(id string, run func(context.Context) extwire.ExtensionFrame, onPanic func(any) extwire.ExtensionFrame) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	c := &call{cancel: cancel}
	s.mu.Lock()
	if old := s.inflight[id]; old != nil {
		old.cancel(errors.New("ext: the host reused the request's id"))
	}
	s.inflight[id] = c
	s.mu.Unlock()
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		var ans extwire.ExtensionFrame
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.e.Logf("request %s: panic: %v", id, p)
					ans = onPanic(p)
				}
			}()
			ans = run(ctx)
		}()
		s.mu.Lock()
		if s.inflight[id] == c {
			delete(s.inflight, id)
		}
		s.mu.Unlock()
		cancelled := ctx.Err() != nil
		cancel(nil)
		if cancelled {
			return // the host gave the request up: an answer would be dropped
		}
		_ = s.send(ans)
	}()
}

// send writes f, waiting while the host is far behind in reading.
func (s *session) send(f extwire.ExtensionFrame) error {
	if err := s.out.Wait(s.ctx); err != nil {
		if s.ctx.Err() != nil {
			return ErrNotRunning
		}
		return fmt.Errorf("ext: writing to the host: %w", err)
	}
	s.out.Send(f)
	return s.out.Err()
}

// safely runs fn, logging a panic instead of crashing the extension.
func (s *session) safely(what string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			s.e.Logf("%s: panic: %v", what, p)
		}
	}()
	fn()
}

// enqueue adds a one-way frame's handling to the ordered queue.
func (s *session) enqueue(fn func(context.Context)) {
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return
	}
	s.queue = append(s.queue, fn)
	s.qmu.Unlock()
	select {
	case s.qwake <- struct{}{}:
	default:
	}
}

func (s *session) closeQueue() {
	s.qmu.Lock()
	s.closed = true
	s.queue = nil
	s.qmu.Unlock()
	select {
	case s.qwake <- struct{}{}:
	default:
	}
}

// runQueue handles the ordered queue, one item at a time, until it is
// closed.
func (s *session) runQueue() {
	defer close(s.qdone)
	for {
		s.qmu.Lock()
		if s.closed {
			s.qmu.Unlock()
			return
		}
		if len(s.queue) == 0 {
			s.qmu.Unlock()
			<-s.qwake
			continue
		}
		fn := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.qmu.Unlock()
		fn(s.ctx)
	}
}

// sameSubscribe says whether a and b subscribe to the same events and
// intercepts (nil is none).
func sameSubscribe(a, b *extwire.SubscribeFrame) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Events, b.Events) && slices.Equal(a.Intercept, b.Intercept)
}

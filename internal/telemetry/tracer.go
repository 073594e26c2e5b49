package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// SchemaURL is the OpenTelemetry semantic conventions version zot's
// spans follow, sent with them: the GenAI conventions are at
// Development status and change between versions.
const SchemaURL = "https://opentelemetry.io/schemas/1.41.0"

// ScopeName names zot's instrumentation in what it sends.
const ScopeName = "zot.dev/zot"

// Tracer records spans and sends them in batches to an OTLP/HTTP
// receiver. Make one with New; Shutdown sends what is left and stops
// its goroutine. Its methods are safe for concurrent use.
type Tracer struct {
	cfg      Config
	resource []Attr
	meter    *meter // nil without a metrics endpoint

	mu      sync.Mutex
	spans   []*Span
	dropped int
	closed  bool

	kick    chan struct{}
	flushes chan chan error
	done    chan struct{}
	wg      sync.WaitGroup
	logOnce sync.Once
}

// New returns a Tracer for cfg and starts its exporting goroutine.
func New(cfg Config) *Tracer {
	cfg.fill()
	t := &Tracer{
		cfg:      cfg,
		resource: cfg.resource(),
		kick:     make(chan struct{}, 1),
		flushes:  make(chan chan error),
		done:     make(chan struct{}),
	}
	if cfg.MetricsEndpoint != "" {
		t.meter = newMeter()
	}
	t.wg.Add(1)
	go t.loop()
	return t
}

// CaptureContent says whether message content (prompts, answers, tool
// arguments and results) goes on the spans.
func (t *Tracer) CaptureContent() bool { return t.cfg.CaptureContent }

// Start begins a span named name under ctx's current span (or a
// client's trace context, or as a new trace's root) and returns ctx with
// it as the current span. A span the sampler leaves out is still
// returned, and its children are left out too; nothing of it is sent.
func (t *Tracer) Start(ctx context.Context, name string, kind SpanKind, attrs ...Attr) (context.Context, *Span) {
	s := &Span{t: t, name: name, kind: kind, start: time.Now(), attrs: attrs}
	if parent, ok := parentOf(ctx); ok {
		s.parent, s.remoteParent = parent.SpanID, parent.Remote
		s.sc = SpanContext{TraceID: parent.TraceID, State: parent.State, Sampled: t.cfg.Sampler.sample(parent.TraceID, &parent)}
	} else {
		s.sc.TraceID = newTraceID()
		s.sc.Sampled = t.cfg.Sampler.sample(s.sc.TraceID, nil)
	}
	s.sc.SpanID = newSpanID()
	return ContextWithSpan(ctx, s), s
}

// queue takes an ended span for the next batch.
func (t *Tracer) queue(s *Span) {
	if !s.sc.Sampled {
		return
	}
	t.mu.Lock()
	if t.closed || len(t.spans) >= t.cfg.MaxQueue {
		t.dropped++
		t.mu.Unlock()
		return
	}
	t.spans = append(t.spans, s)
	full := len(t.spans) >= t.cfg.BatchSize
	t.mu.Unlock()
	if full {
		t.Kick()
	}
}

// Kick asks for the spans ended so far to be sent now, without waiting
// (zot does at the end of each prompt, so a trace shows up while the
// session goes on).
func (t *Tracer) Kick() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Flush sends every span ended so far, and the metrics, and returns when the receiver has
// answered, or ctx ends.
func (t *Tracer) Flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case t.flushes <- reply:
	case <-t.done:
		return errors.New("telemetry: tracer shut down")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown sends what is left (within ctx) and stops the exporting
// goroutine; spans ended later are dropped. A second Shutdown does
// nothing.
func (t *Tracer) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	err := t.Flush(ctx)
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	close(t.done)
	t.wg.Wait()
	return err
}

// loop sends batches: every BatchDelay, when a batch fills, when kicked
// and when asked to flush.
func (t *Tracer) loop() {
	defer t.wg.Done()
	tick := time.NewTicker(t.cfg.BatchDelay)
	defer tick.Stop()
	metrics := time.NewTicker(t.cfg.MetricsInterval)
	defer metrics.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
			t.logErr(t.send(context.Background()))
		case <-metrics.C:
			t.logErr(t.sendMetrics(context.Background()))
		case <-t.kick:
			t.logErr(t.send(context.Background()))
		case reply := <-t.flushes:
			err := t.send(context.Background())
			if merr := t.sendMetrics(context.Background()); err == nil {
				err = merr
			}
			reply <- err
		}
	}
}

// logErr says on the log what failed to send, the first time.
func (t *Tracer) logErr(err error) {
	if err != nil && t.cfg.Log != nil {
		t.logOnce.Do(func() { fmt.Fprintf(t.cfg.Log, "zot: telemetry: %v (further failures are not reported)\n", err) })
	}
}

// send posts the spans waiting, in batches of BatchSize.
func (t *Tracer) send(ctx context.Context) error {
	var firstErr error
	dropped := 0
	for {
		t.mu.Lock()
		n := min(len(t.spans), t.cfg.BatchSize)
		batch := t.spans[:n:n]
		t.spans = t.spans[n:]
		dropped += t.dropped
		t.dropped = 0
		t.mu.Unlock()
		if n == 0 {
			if dropped > 0 && firstErr == nil {
				firstErr = fmt.Errorf("%d spans dropped: the queue of %d was full", dropped, t.cfg.MaxQueue)
			}
			return firstErr
		}
		if err := t.post(ctx, t.cfg.Endpoint, t.encode(batch)); err != nil && firstErr == nil {
			firstErr = err
		}
	}
}

// post sends one request's body to endpoint.
func (t *Tracer) post(ctx context.Context, endpoint string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("sending telemetry: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "zot-otlp")
	for k, v := range t.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := t.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("sending telemetry to %s: %w", endpoint, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("sending telemetry to %s: %s: %s", endpoint, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

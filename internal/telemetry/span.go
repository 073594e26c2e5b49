package telemetry

import (
	"context"
	"sync"
	"time"
)

// SpanKind is OTLP's span kind.
type SpanKind int

// The kinds zot's spans have (OTLP's numbers).
const (
	KindInternal SpanKind = 1
	KindServer   SpanKind = 2
	KindClient   SpanKind = 3
)

// StatusCode is OTLP's span status code.
type StatusCode int

// The status codes.
const (
	StatusUnset StatusCode = 0
	StatusOK    StatusCode = 1
	StatusError StatusCode = 2
)

// Attr is one attribute: a key and a string, integer, float, boolean or
// string array value.
type Attr struct {
	Key   string
	kind  uint8
	str   string
	num   int64
	float float64
	strs  []string
}

const (
	attrString uint8 = iota
	attrInt
	attrFloat
	attrBool
	attrStrings
)

// String is a string attribute.
func String(k, v string) Attr { return Attr{Key: k, kind: attrString, str: v} }

// Int is an integer attribute.
func Int(k string, v int64) Attr { return Attr{Key: k, kind: attrInt, num: v} }

// Float is a floating-point attribute.
func Float(k string, v float64) Attr { return Attr{Key: k, kind: attrFloat, float: v} }

// Bool is a boolean attribute.
func Bool(k string, v bool) Attr {
	a := Attr{Key: k, kind: attrBool}
	if v {
		a.num = 1
	}
	return a
}

// Strings is a string array attribute.
func Strings(k string, v ...string) Attr { return Attr{Key: k, kind: attrStrings, strs: v} }

// Span is one span being recorded. Its methods are safe for concurrent
// use and do nothing on a nil Span (an unsampled one) or after End.
type Span struct {
	t      *Tracer
	sc     SpanContext
	parent SpanID
	// remoteParent says the parent is a client's span.
	remoteParent bool
	name         string
	kind         SpanKind
	start        time.Time
	mu           sync.Mutex
	end          time.Time
	ended        bool
	attrs        []Attr
	status       StatusCode
	message      string
}

// Context is the span's trace context (the zero value for a nil Span).
func (s *Span) Context() SpanContext {
	if s == nil {
		return SpanContext{}
	}
	return s.sc
}

// Set adds attributes (a key set again keeps its last value).
func (s *Span) Set(attrs ...Attr) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.ended {
		s.attrs = append(s.attrs, attrs...)
	}
	s.mu.Unlock()
}

// SetName renames the span (the model a call answered with, say).
func (s *Span) SetName(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.ended {
		s.name = name
	}
	s.mu.Unlock()
}

// Fail marks the span failed: status Error with msg, and error.type set
// to kind (the semantic conventions' attribute).
func (s *Span) Fail(kind, msg string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.ended {
		s.status, s.message = StatusError, msg
		s.attrs = append(s.attrs, String("error.type", kind))
	}
	s.mu.Unlock()
}

// End ends the span now and hands it to the exporter. A second End does
// nothing.
func (s *Span) End() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended, s.end = true, time.Now()
	s.mu.Unlock()
	s.t.queue(s)
}

// spanKey keys the current span in a context.
type spanKey struct{}

// ContextWithSpan returns ctx with s as its current span: spans started
// under it are its children.
func ContextWithSpan(ctx context.Context, s *Span) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, spanKey{}, s)
}

// SpanFromContext is ctx's current span, or nil.
func SpanFromContext(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// StartChild starts a span named name under ctx's current span, with
// that span's tracer, and returns ctx with it current; without a current
// span (telemetry off, or a call outside any prompt) it returns ctx and a
// nil Span, whose methods do nothing.
func StartChild(ctx context.Context, name string, kind SpanKind, attrs ...Attr) (context.Context, *Span) {
	parent := SpanFromContext(ctx)
	if parent == nil || parent.t == nil {
		return ctx, nil
	}
	return parent.t.Start(ctx, name, kind, attrs...)
}

// parentOf is the trace context a span started under ctx continues: the
// current span's, else a client's (WithRemoteParent), else none.
func parentOf(ctx context.Context) (SpanContext, bool) {
	if s := SpanFromContext(ctx); s != nil {
		return s.sc, true
	}
	if sc, ok := ctx.Value(remoteKey{}).(SpanContext); ok {
		return sc, true
	}
	return SpanContext{}, false
}

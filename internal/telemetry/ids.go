package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	mrand "math/rand/v2"
	"strings"
)

// TraceID is a W3C trace id.
type TraceID [16]byte

// SpanID is a W3C span id (a parent id in a traceparent).
type SpanID [8]byte

// IsValid says the id is not all zeros.
func (t TraceID) IsValid() bool { return t != TraceID{} }

// IsValid says the id is not all zeros.
func (s SpanID) IsValid() bool { return s != SpanID{} }

// String is the id in lower-case hex.
func (t TraceID) String() string { return hex.EncodeToString(t[:]) }

// String is the id in lower-case hex.
func (s SpanID) String() string { return hex.EncodeToString(s[:]) }

// SpanContext is what identifies a span across processes: a W3C trace
// context.
type SpanContext struct {
	TraceID TraceID
	SpanID  SpanID
	// Sampled is the traceparent's sampled flag.
	Sampled bool
	// State is the tracestate header's value, passed on as it came.
	State string
	// Remote says it came from another process (a client's traceparent).
	Remote bool
}

// IsValid says both ids are set.
func (sc SpanContext) IsValid() bool { return sc.TraceID.IsValid() && sc.SpanID.IsValid() }

// Traceparent is sc as a W3C traceparent value (version 00).
func (sc SpanContext) Traceparent() string {
	flags := "00"
	if sc.Sampled {
		flags = "01"
	}
	return "00-" + sc.TraceID.String() + "-" + sc.SpanID.String() + "-" + flags
}

// ParseTraceparent reads a W3C traceparent value
// ("00-<32 hex>-<16 hex>-<2 hex>"). A later version is read by its
// first four fields, as the recommendation asks; all-zero ids, upper-case
// hex, version ff and a malformed value are refused.
func ParseTraceparent(s string) (SpanContext, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 55 || (len(s) > 55 && s[55] != '-') {
		return SpanContext{}, false
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return SpanContext{}, false
	}
	ver, tid, sid, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	if !lowerHex(ver) || ver == "ff" || (ver == "00" && len(s) != 55) {
		return SpanContext{}, false
	}
	if !lowerHex(tid) || !lowerHex(sid) || !lowerHex(flags) {
		return SpanContext{}, false
	}
	var sc SpanContext
	hex.Decode(sc.TraceID[:], []byte(tid)) //nolint:errcheck // checked above
	hex.Decode(sc.SpanID[:], []byte(sid))  //nolint:errcheck
	var f [1]byte
	hex.Decode(f[:], []byte(flags)) //nolint:errcheck
	sc.Sampled = f[0]&1 == 1
	sc.Remote = true
	if !sc.IsValid() {
		return SpanContext{}, false
	}
	return sc, true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// newTraceID is a random trace id.
func newTraceID() TraceID {
	var t TraceID
	for !t.IsValid() {
		_, _ = rand.Read(t[:])
	}
	return t
}

// newSpanID is a random span id (a fast generator: span ids need to be
// unique within a trace, not secret).
func newSpanID() SpanID {
	var s SpanID
	for !s.IsValid() {
		binary.LittleEndian.PutUint64(s[:], mrand.Uint64())
	}
	return s
}

// remoteKey keys a client's trace context in a context.
type remoteKey struct{}

// WithRemoteParent returns ctx carrying sc, a client's trace context
// (from a traceparent it sent): the next span started under ctx
// continues the client's trace. An invalid sc leaves ctx as it is.
func WithRemoteParent(ctx context.Context, sc SpanContext) context.Context {
	if !sc.IsValid() {
		return ctx
	}
	sc.Remote = true
	return context.WithValue(ctx, remoteKey{}, sc)
}

// WithTraceparent is WithRemoteParent of a traceparent value (and its
// tracestate): a value that does not parse leaves ctx as it is.
func WithTraceparent(ctx context.Context, traceparent, tracestate string) context.Context {
	sc, ok := ParseTraceparent(traceparent)
	if !ok {
		return ctx
	}
	sc.State = tracestate
	return WithRemoteParent(ctx, sc)
}

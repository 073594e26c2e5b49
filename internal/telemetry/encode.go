package telemetry

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// encode is batch as an OTLP/HTTP JSON ExportTraceServiceRequest: the
// protobuf JSON mapping with the OTLP's own rules (ids in hex, enums as
// numbers, 64-bit integers as strings, lowerCamelCase keys).
func (t *Tracer) encode(batch []*Span) []byte {
	b := make([]byte, 0, 512+len(batch)*512)
	b = append(b, `{"resourceSpans":[{"resource":{"attributes":`...)
	b = appendAttrs(b, t.resource)
	b = append(b, `},"scopeSpans":[{"scope":{"name":`...)
	b = appendString(b, ScopeName)
	b = append(b, `,"version":`...)
	b = appendString(b, t.cfg.Version)
	b = append(b, `},"spans":[`...)
	for i, s := range batch {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.appendJSON(b)
	}
	b = append(b, `],"schemaUrl":`...)
	b = appendString(b, SchemaURL)
	b = append(b, `}],"schemaUrl":`...)
	b = appendString(b, SchemaURL)
	return append(b, `}]}`...)
}

// appendJSON appends the span as an OTLP JSON Span.
func (s *Span) appendJSON(b []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b = append(b, `{"traceId":"`...)
	b = append(b, s.sc.TraceID.String()...)
	b = append(b, `","spanId":"`...)
	b = append(b, s.sc.SpanID.String()...)
	b = append(b, '"')
	if s.sc.State != "" {
		b = append(b, `,"traceState":`...)
		b = appendString(b, s.sc.State)
	}
	if s.parent.IsValid() {
		b = append(b, `,"parentSpanId":"`...)
		b = append(b, s.parent.String()...)
		b = append(b, '"')
	}
	b = append(b, `,"flags":`...)
	flags := uint64(0x100) // the parent's remoteness is known
	if s.sc.Sampled {
		flags |= 1
	}
	if pr, ok := s.parentRemote(); ok && pr {
		flags |= 0x200
	}
	b = strconv.AppendUint(b, flags, 10)
	b = append(b, `,"name":`...)
	b = appendString(b, s.name)
	b = append(b, `,"kind":`...)
	b = strconv.AppendInt(b, int64(s.kind), 10)
	b = append(b, `,"startTimeUnixNano":"`...)
	b = strconv.AppendInt(b, s.start.UnixNano(), 10)
	b = append(b, `","endTimeUnixNano":"`...)
	b = strconv.AppendInt(b, s.end.UnixNano(), 10)
	b = append(b, `","attributes":`...)
	b = appendAttrs(b, dedupe(s.attrs))
	b = append(b, `,"status":{`...)
	if s.status != StatusUnset {
		b = append(b, `"code":`...)
		b = strconv.AppendInt(b, int64(s.status), 10)
		if s.message != "" {
			b = append(b, `,"message":`...)
			b = appendString(b, s.message)
		}
	}
	return append(b, `}}`...)
}

// parentRemote says whether the span's parent is in another process.
func (s *Span) parentRemote() (remote, known bool) {
	if !s.parent.IsValid() {
		return false, false
	}
	return s.remoteParent, true
}

// dedupe keeps the last value of each key, in the order keys first came.
func dedupe(attrs []Attr) []Attr {
	seen := make(map[string]int, len(attrs))
	out := attrs[:0:0]
	for _, a := range attrs {
		if i, ok := seen[a.Key]; ok {
			out[i] = a
			continue
		}
		seen[a.Key] = len(out)
		out = append(out, a)
	}
	return out
}

// appendAttrs appends a JSON array of OTLP KeyValues.
func appendAttrs(b []byte, attrs []Attr) []byte {
	b = append(b, '[')
	for i, a := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, a.Key)
		b = append(b, `,"value":`...)
		b = a.appendValue(b)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendValue appends the attribute's OTLP AnyValue.
func (a Attr) appendValue(b []byte) []byte {
	switch a.kind {
	case attrInt:
		b = append(b, `{"intValue":"`...)
		b = strconv.AppendInt(b, a.num, 10)
		return append(b, `"}`...)
	case attrFloat:
		if math.IsNaN(a.float) || math.IsInf(a.float, 0) {
			return append(b, `{}`...)
		}
		b = append(b, `{"doubleValue":`...)
		b = strconv.AppendFloat(b, a.float, 'g', -1, 64)
		return append(b, '}')
	case attrBool:
		if a.num != 0 {
			return append(b, `{"boolValue":true}`...)
		}
		return append(b, `{"boolValue":false}`...)
	case attrStrings:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, s := range a.strs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"stringValue":`...)
			b = appendString(b, s)
			b = append(b, '}')
		}
		return append(b, `]}}`...)
	}
	b = append(b, `{"stringValue":`...)
	b = appendString(b, a.str)
	return append(b, '}')
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hexd[r&0xf])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

package engine

import "encoding/json"

// TraceContextOf reads the W3C trace context a client sent in a
// request's _meta object (its traceparent and tracestate members, as MCP
// and ACP carry them), for Work.Traceparent and Work.Tracestate. Members
// that are missing or not strings are "", and so is everything of a
// _meta that is not an object: a tracer checks the value itself.
func TraceContextOf(meta json.RawMessage) (traceparent, tracestate string) {
	if len(meta) == 0 {
		return "", ""
	}
	var m struct {
		Traceparent any `json:"traceparent"`
		Tracestate  any `json:"tracestate"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return "", ""
	}
	traceparent, _ = m.Traceparent.(string)
	tracestate, _ = m.Tracestate.(string)
	return traceparent, tracestate
}

// Package otlptest is an OTLP/HTTP receiver of traces and metrics for tests: it decodes what
// it is sent into the official OTLP protobuf types
// (go.opentelemetry.io/proto/otlp) with protojson, so a test checks both
// the spans and the JSON mapping they came in. It is for tests only;
// zot's binary never links it.
package otlptest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Receiver is an OTLP/HTTP traces endpoint on loopback.
type Receiver struct {
	// URL is the endpoint's root (post to URL + "/v1/traces").
	URL string

	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []*tracepb.TracesData
	metrics []*metricspb.MetricsData
	headers []http.Header
	errs    []error
	changed chan struct{}
}

// NewReceiver starts a receiver, closed when t ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err == nil && req.URL.Path != "/v1/traces" && req.URL.Path != "/v1/metrics" {
		err = fmt.Errorf("posted to %s, not /v1/traces or /v1/metrics", req.URL.Path)
	}
	if err == nil && req.Header.Get("Content-Type") != "application/json" {
		err = fmt.Errorf("Content-Type %q, not application/json", req.Header.Get("Content-Type"))
	}
	var td *tracepb.TracesData
	var md *metricspb.MetricsData
	if err == nil && req.URL.Path == "/v1/metrics" {
		md = &metricspb.MetricsData{}
		err = decodeInto(body, md)
	} else if err == nil {
		td, err = Decode(body)
	}
	r.mu.Lock()
	switch {
	case err != nil:
		r.errs = append(r.errs, err)
	case md != nil:
		r.metrics = append(r.metrics, md)
	default:
		r.reqs = append(r.reqs, td)
		r.headers = append(r.headers, req.Header.Clone())
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}

// Decode reads an OTLP/HTTP JSON ExportTraceServiceRequest into
// TracesData (the request's twin, field for field). The OTLP JSON
// mapping differs from protojson's in one place: trace and span ids are
// hex, not base64; they are checked (hex of the right length) and
// turned into base64 first, and everything else is left to protojson.
func Decode(body []byte) (*tracepb.TracesData, error) {
	td := &tracepb.TracesData{}
	if err := decodeInto(body, td); err != nil {
		return nil, err
	}
	return td, nil
}

// decodeInto reads an OTLP/HTTP JSON body into m (see Decode).
func decodeInto(body []byte, m proto.Message) error {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := hexIDs(raw); err != nil {
		return err
	}
	fixed, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(fixed, m); err != nil {
		return fmt.Errorf("protojson: %w\n%s", err, body)
	}
	return nil
}

// hexIDs rewrites the hex ids of every span (and link) to base64.
func hexIDs(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			size := map[string]int{"traceId": 16, "spanId": 8, "parentSpanId": 8}[k]
			if s, ok := x.(string); ok && size > 0 {
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != size {
					return fmt.Errorf("%s %q: want %d bytes in hex", k, s, size)
				}
				v[k] = base64.StdEncoding.EncodeToString(b)
				continue
			}
			if err := hexIDs(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := hexIDs(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// Errors are the requests the receiver could not decode.
func (r *Receiver) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// Headers are the headers of each request decoded.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Requests are the requests decoded so far.
func (r *Receiver) Requests() []*tracepb.TracesData {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.TracesData(nil), r.reqs...)
}

// Metrics are the metrics requests decoded so far.
func (r *Receiver) Metrics() []*metricspb.MetricsData {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricspb.MetricsData(nil), r.metrics...)
}

// Spans are the spans of every request so far, in the order received.
func (r *Receiver) Spans() []*tracepb.Span {
	var out []*tracepb.Span
	for _, td := range r.Requests() {
		for _, rs := range td.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

// WaitSpans waits until at least n spans came (or an undecodable
// request, or timeout) and returns them.
func (r *Receiver) WaitSpans(t testing.TB, n int, timeout time.Duration) []*tracepb.Span {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if errs := r.Errors(); len(errs) > 0 {
			t.Fatalf("the receiver could not decode a request: %v", errs[0])
		}
		if spans := r.Spans(); len(spans) >= n {
			return spans
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("the receiver got %d spans in %v, want %d", len(r.Spans()), timeout, n)
		}
	}
}

// Attr is the value of a span's attribute key as a Go value (string,
// int64, float64, bool, []any), and whether it is there.
func Attr(attrs []*commonpb.KeyValue, key string) (any, bool) {
	for _, kv := range attrs {
		if kv.Key == key {
			return value(kv.Value), true
		}
	}
	return nil, false
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

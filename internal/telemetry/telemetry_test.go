package telemetry_test

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"zot.dev/zot/internal/telemetry"
	"zot.dev/zot/internal/telemetry/otlptest"
)

func newTracer(t *testing.T, rcv *otlptest.Receiver, mod func(*telemetry.Config)) *telemetry.Tracer {
	t.Helper()
	cfg := telemetry.Config{Endpoint: rcv.URL + "/v1/traces", Version: "test", Headers: map[string]string{"X-Tenant": "t1"}}
	if mod != nil {
		mod(&cfg)
	}
	tr := telemetry.New(cfg)
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr
}

// TestSpansReachReceiver: spans started under one another arrive as one
// trace with their parent links, kinds, times, attributes of every type,
// status, the scope's schema URL and the resource, in JSON that protojson
// reads into the OTLP types.
func TestSpansReachReceiver(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	tr := newTracer(t, rcv, nil)
	ctx, root := tr.Start(context.Background(), "invoke_agent zot", telemetry.KindInternal, telemetry.String("gen_ai.operation.name", "invoke_agent"))
	_, child := tr.Start(ctx, "chat m", telemetry.KindClient,
		telemetry.Int("gen_ai.usage.input_tokens", 12), telemetry.Float("zot.cost.usd", 0.25),
		telemetry.Bool("b", true), telemetry.Strings("gen_ai.response.finish_reasons", "stop"),
		telemetry.String("text", "quote \" backslash \\ newline \n nul \x00 bad \xff é"))
	child.Set(telemetry.Int("gen_ai.usage.input_tokens", 13)) // the last value wins
	child.Fail("429", "rate limited")
	child.End()
	child.End() // a second End does nothing
	root.End()
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.WaitSpans(t, 2, 5*time.Second)
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	c, r := spans[0], spans[1]
	if c.Name != "chat m" || r.Name != "invoke_agent zot" {
		t.Fatalf("names %q, %q", c.Name, r.Name)
	}
	if string(c.TraceId) != string(r.TraceId) || string(c.ParentSpanId) != string(r.SpanId) || len(r.ParentSpanId) != 0 {
		t.Errorf("the chat span is not the child of the root: trace %x/%x parent %x root %x", c.TraceId, r.TraceId, c.ParentSpanId, r.SpanId)
	}
	if hex.EncodeToString(r.TraceId) != root.Context().TraceID.String() {
		t.Errorf("trace id %x, want %s", r.TraceId, root.Context().TraceID)
	}
	if c.Kind != tracepb.Span_SPAN_KIND_CLIENT || r.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("kinds %v %v", c.Kind, r.Kind)
	}
	if c.StartTimeUnixNano == 0 || c.EndTimeUnixNano < c.StartTimeUnixNano {
		t.Errorf("times %d..%d", c.StartTimeUnixNano, c.EndTimeUnixNano)
	}
	if c.Flags&0x1 == 0 || c.Flags&0x100 == 0 || c.Flags&0x200 != 0 {
		t.Errorf("flags %#x: want sampled, remoteness known, parent local", c.Flags)
	}
	want := map[string]any{
		"gen_ai.usage.input_tokens":      int64(13),
		"zot.cost.usd":                   0.25,
		"b":                              true,
		"gen_ai.response.finish_reasons": []any{"stop"},
		"text":                           "quote \" backslash \\ newline \n nul \x00 bad \ufffd é",
		"error.type":                     "429",
	}
	for k, v := range want {
		got, ok := otlptest.Attr(c.Attributes, k)
		if !ok || !equal(got, v) {
			t.Errorf("%s = %#v, want %#v", k, got, v)
		}
	}
	if c.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || c.Status.GetMessage() != "rate limited" {
		t.Errorf("status %v", c.Status)
	}
	td := rcv.Requests()[0]
	rs := td.ResourceSpans[0]
	if v, _ := otlptest.Attr(rs.Resource.Attributes, "service.name"); v != "zot" {
		t.Errorf("service.name %v", v)
	}
	if rs.ScopeSpans[0].SchemaUrl != telemetry.SchemaURL || rs.ScopeSpans[0].Scope.Name != telemetry.ScopeName {
		t.Errorf("scope %v schema %q", rs.ScopeSpans[0].Scope, rs.ScopeSpans[0].SchemaUrl)
	}
	if h := rcv.Headers()[0].Get("X-Tenant"); h != "t1" {
		t.Errorf("header X-Tenant %q", h)
	}
}

func equal(a, b any) bool {
	as, ok1 := a.([]any)
	bs, ok2 := b.([]any)
	if ok1 && ok2 {
		if len(as) != len(bs) {
			return false
		}
		for i := range as {
			if as[i] != bs[i] {
				return false
			}
		}
		return true
	}
	return a == b
}

// TestRemoteParent: a span started under a client's traceparent is in
// the client's trace, its parent the client's span, marked remote; the
// tracestate goes on.
func TestRemoteParent(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	tr := newTracer(t, rcv, nil)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := telemetry.WithTraceparent(context.Background(), tp, "vendor=x")
	_, s := tr.Start(ctx, "invoke_agent zot", telemetry.KindInternal)
	s.End()
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sp := rcv.WaitSpans(t, 1, 5*time.Second)[0]
	if hex.EncodeToString(sp.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(sp.ParentSpanId) != "00f067aa0ba902b7" {
		t.Errorf("trace %x parent %x", sp.TraceId, sp.ParentSpanId)
	}
	if sp.TraceState != "vendor=x" || sp.Flags&0x300 != 0x300 {
		t.Errorf("tracestate %q flags %#x", sp.TraceState, sp.Flags)
	}
	// An unsampled client trace is left out, children too.
	ctx = telemetry.WithTraceparent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "")
	ctx, s = tr.Start(ctx, "left out", telemetry.KindInternal)
	_, c := tr.Start(ctx, "left out too", telemetry.KindInternal)
	c.End()
	s.End()
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Spans()); n != 1 {
		t.Errorf("%d spans, want the unsampled ones left out", n)
	}
}

func TestParseTraceparent(t *testing.T) {
	good := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if sc, ok := telemetry.ParseTraceparent(good); !ok || sc.Traceparent() != good || !sc.Sampled {
		t.Errorf("%s: %+v %v", good, sc, ok)
	}
	if _, ok := telemetry.ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later"); !ok {
		t.Errorf("a later version with more fields is read by its first four")
	}
	for _, bad := range []string{
		"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
	} {
		if sc, ok := telemetry.ParseTraceparent(bad); ok {
			t.Errorf("%q parsed: %+v", bad, sc)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cfg, on, err := telemetry.FromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":                        "http://collector:4318/",
		"OTEL_EXPORTER_OTLP_HEADERS":                         "Authorization=Basic%20abc, x-tenant = t1",
		"OTEL_SERVICE_NAME":                                  "svc",
		"OTEL_TRACES_SAMPLER":                                "parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":                            "0.5",
		"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "TRUE",
	}), false)
	if err != nil || !on {
		t.Fatal(on, err)
	}
	if cfg.MetricsEndpoint != "http://collector:4318/v1/metrics" {
		t.Errorf("metrics endpoint %q", cfg.MetricsEndpoint)
	}
	if cfg.Endpoint != "http://collector:4318/v1/traces" || cfg.Headers["Authorization"] != "Basic abc" || cfg.Headers["x-tenant"] != "t1" ||
		cfg.ServiceName != "svc" || cfg.Sampler.Ratio != 0.5 || !cfg.CaptureContent {
		t.Errorf("%+v", cfg)
	}
	cfg, _, _ = telemetry.FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:9/x"}), false)
	if cfg.Endpoint != "http://b:9/x" || cfg.MetricsEndpoint != "http://a:4318/v1/metrics" {
		t.Errorf("the traces endpoint is used as is: %q (metrics %q)", cfg.Endpoint, cfg.MetricsEndpoint)
	}
	cfg, _, _ = telemetry.FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_METRICS_EXPORTER": "none"}), false)
	if cfg.MetricsEndpoint != "" {
		t.Errorf("metrics on with OTEL_METRICS_EXPORTER=none: %q", cfg.MetricsEndpoint)
	}
	if _, on, _ := telemetry.FromEnv(env(nil), false); on {
		t.Errorf("on with nothing set")
	}
	if _, on, _ := telemetry.FromEnv(env(nil), true); !on {
		t.Errorf("off with --otel")
	}
	if _, on, _ := telemetry.FromEnv(env(map[string]string{"OTEL_SDK_DISABLED": "true"}), true); on {
		t.Errorf("on with OTEL_SDK_DISABLED")
	}
	for _, bad := range []map[string]string{
		{"OTEL_TRACES_SAMPLER": "sometimes"},
		{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
		{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		{"OTEL_TRACES_EXPORTER": "zipkin"},
	} {
		if _, _, err := telemetry.FromEnv(env(bad), true); err == nil {
			t.Errorf("%v: no error", bad)
		} else if !strings.Contains(err.Error(), "OTEL_") && !strings.Contains(err.Error(), "endpoint") {
			t.Errorf("%v: the error names no variable: %v", bad, err)
		}
	}
}

// TestSampler: always_off keeps nothing; a ratio keeps about its share,
// the same traces in every process.
func TestSampler(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	tr := newTracer(t, rcv, func(c *telemetry.Config) { c.Sampler = telemetry.Sampler{Name: "traceidratio", Ratio: 0.25} })
	for range 400 {
		_, s := tr.Start(context.Background(), "x", telemetry.KindInternal)
		s.End()
	}
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Spans()); n < 50 || n > 150 {
		t.Errorf("ratio 0.25 kept %d of 400", n)
	}
}

// TestQueueBound: past MaxQueue spans are dropped, and the drop is said
// on the log.
func TestQueueBound(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	var log strings.Builder
	tr := newTracer(t, rcv, func(c *telemetry.Config) { c.MaxQueue, c.BatchSize, c.BatchDelay = 10, 100, time.Hour; c.Log = &log })
	for range 25 {
		_, s := tr.Start(context.Background(), "x", telemetry.KindInternal)
		s.End()
	}
	err := tr.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "15 spans dropped") {
		t.Errorf("flush: %v", err)
	}
	if n := len(rcv.Spans()); n != 10 {
		t.Errorf("%d spans, want 10", n)
	}
}

// TestMetrics: model calls are recorded in gen_ai.client.token.usage
// (one point per token type), gen_ai.client.operation.duration and
// zot.client.cost, cumulative histograms with the conventions' bounds,
// sent as OTLP/HTTP JSON that protojson reads into the OTLP types.
func TestMetrics(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	tr := newTracer(t, rcv, func(c *telemetry.Config) { c.MetricsEndpoint = rcv.URL + "/v1/metrics" })
	attrs := []telemetry.Attr{telemetry.String("gen_ai.operation.name", "chat"), telemetry.String("gen_ai.provider.name", "anthropic")}
	tr.RecordModelCall(1500*time.Millisecond, 100, 20, 0.5, attrs...)
	tr.RecordModelCall(30*time.Millisecond, 4, 3, 0.25, attrs...)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(context.Background()); err != nil { // nothing new: nothing sent
		t.Fatal(err)
	}
	ms := rcv.Metrics()
	if len(ms) != 1 {
		t.Fatalf("%d metrics requests, want 1", len(ms))
	}
	sm := ms[0].ResourceMetrics[0].ScopeMetrics[0]
	if sm.SchemaUrl != telemetry.SchemaURL {
		t.Errorf("schema URL %q", sm.SchemaUrl)
	}
	got := map[string]bool{}
	for _, m := range sm.Metrics {
		got[m.Name] = true
		switch m.Name {
		case telemetry.MetricTokenUsage:
			if m.Unit != "{token}" || len(m.GetHistogram().DataPoints) != 2 {
				t.Fatalf("token usage: %v", m)
			}
			for _, p := range m.GetHistogram().DataPoints {
				typ, _ := otlptest.Attr(p.Attributes, "gen_ai.token.type")
				want := map[any]float64{"input": 104, "output": 23}[typ]
				if p.Count != 2 || p.GetSum() != want || len(p.BucketCounts) != len(p.ExplicitBounds)+1 {
					t.Errorf("%v tokens: count %d sum %v buckets %v", typ, p.Count, p.GetSum(), p.BucketCounts)
				}
			}
			in := m.GetHistogram().DataPoints[0]
			// 4 is in the bucket up to 4, 100 in the one up to 256.
			if in.BucketCounts[1] != 1 || in.BucketCounts[4] != 1 || in.GetMin() != 4 || in.GetMax() != 100 {
				t.Errorf("input buckets %v min %v max %v", in.BucketCounts, in.GetMin(), in.GetMax())
			}
			if m.GetHistogram().AggregationTemporality != 2 {
				t.Errorf("temporality %v", m.GetHistogram().AggregationTemporality)
			}
		case telemetry.MetricOperationDuration:
			p := m.GetHistogram().DataPoints[0]
			if m.Unit != "s" || p.Count != 2 || p.GetSum() < 1.52 || p.GetSum() > 1.54 {
				t.Errorf("duration: unit %q count %d sum %v", m.Unit, p.Count, p.GetSum())
			}
		case telemetry.MetricCost:
			p := m.GetSum().DataPoints[0]
			if m.Unit != "USD" || !m.GetSum().IsMonotonic || p.GetAsDouble() != 0.75 {
				t.Errorf("cost: %v", m)
			}
		}
	}
	for _, name := range []string{telemetry.MetricTokenUsage, telemetry.MetricOperationDuration, telemetry.MetricCost} {
		if !got[name] {
			t.Errorf("no %s", name)
		}
	}
}

package telemetry

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The metrics zot records, as the GenAI conventions name them, and
// zot's cost beside them.
const (
	// MetricTokenUsage is gen_ai.client.token.usage: a histogram of each
	// model call's input and output tokens (gen_ai.token.type).
	MetricTokenUsage = "gen_ai.client.token.usage"
	// MetricOperationDuration is gen_ai.client.operation.duration: a
	// histogram of each model call's duration in seconds.
	MetricOperationDuration = "gen_ai.client.operation.duration"
	// MetricCost is zot.client.cost: what the model calls cost in US
	// dollars, a monotonic sum (from the model catalog's prices).
	MetricCost = "zot.client.cost"
)

// The conventions' advised bucket boundaries.
var (
	tokenBounds    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// meter keeps cumulative metrics since it was made, one point per
// metric and attribute set.
type meter struct {
	start  time.Time
	mu     sync.Mutex
	points map[string]*point // by metric name and attributes
	order  []string          // keys in the order first seen
	dirty  bool              // something was recorded since the last export
}

// point is one metric's value for one attribute set: a histogram's
// buckets, count, sum, min and max, or a sum.
type point struct {
	name    string
	attrs   []Attr
	bounds  []float64 // nil for a sum
	buckets []uint64
	count   uint64
	sum     float64
	min     float64
	max     float64
}

func newMeter() *meter { return &meter{start: time.Now(), points: map[string]*point{}} }

// record adds v to the metric name's point for attrs; bounds are its
// histogram's (nil for a sum).
func (m *meter) record(name string, bounds []float64, v float64, attrs ...Attr) {
	if m == nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	key := pointKey(name, attrs)
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.points[key]
	if !ok {
		p = &point{name: name, attrs: attrs, bounds: bounds, min: v, max: v}
		if bounds != nil {
			p.buckets = make([]uint64, len(bounds)+1)
		}
		m.points[key] = p
		m.order = append(m.order, key)
	}
	p.count++
	p.sum += v
	p.min, p.max = min(p.min, v), max(p.max, v)
	if bounds != nil {
		// A bucket holds the values up to its bound, the bound included.
		i, _ := slices.BinarySearch(bounds, v)
		p.buckets[i]++
	}
	m.dirty = true
}

// pointKey is a metric's name and its attributes, sorted.
func pointKey(name string, attrs []Attr) string {
	parts := make([]string, 0, len(attrs))
	for _, a := range attrs {
		var v []byte
		parts = append(parts, a.Key+"="+string(a.appendValue(v)))
	}
	slices.Sort(parts)
	return name + "\x00" + strings.Join(parts, "\x00")
}

// encode is the metrics as an OTLP/HTTP JSON ExportMetricsServiceRequest,
// or nil when nothing was recorded since the last.
func (m *meter) encode(t *Tracer) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirty {
		return nil
	}
	m.dirty = false
	now := time.Now().UnixNano()
	b := make([]byte, 0, 1024)
	b = append(b, `{"resourceMetrics":[{"resource":{"attributes":`...)
	b = appendAttrs(b, t.resource)
	b = append(b, `},"scopeMetrics":[{"scope":{"name":`...)
	b = appendString(b, ScopeName)
	b = append(b, `,"version":`...)
	b = appendString(b, t.cfg.Version)
	b = append(b, `},"metrics":[`...)
	first := true
	for _, name := range []string{MetricTokenUsage, MetricOperationDuration, MetricCost} {
		var pts []*point
		for _, k := range m.order {
			if p := m.points[k]; p.name == name {
				pts = append(pts, p)
			}
		}
		if len(pts) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = m.appendMetric(b, name, pts, now)
	}
	b = append(b, `],"schemaUrl":`...)
	b = appendString(b, SchemaURL)
	b = append(b, `}],"schemaUrl":`...)
	b = appendString(b, SchemaURL)
	return append(b, `}]}`...)
}

// appendMetric appends one OTLP Metric with its points, cumulative
// since the meter began.
func (m *meter) appendMetric(b []byte, name string, pts []*point, now int64) []byte {
	desc, unit := "GenAI operation duration.", "s"
	switch name {
	case MetricTokenUsage:
		desc, unit = "Number of input and output tokens used.", "{token}"
	case MetricCost:
		desc, unit = "What model calls cost, from the model catalog's prices.", "USD"
	}
	b = append(b, `{"name":`...)
	b = appendString(b, name)
	b = append(b, `,"description":`...)
	b = appendString(b, desc)
	b = append(b, `,"unit":`...)
	b = appendString(b, unit)
	if pts[0].bounds == nil {
		b = append(b, `,"sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[`...)
	} else {
		b = append(b, `,"histogram":{"aggregationTemporality":2,"dataPoints":[`...)
	}
	for i, p := range pts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"attributes":`...)
		b = appendAttrs(b, p.attrs)
		b = append(b, `,"startTimeUnixNano":"`...)
		b = strconv.AppendInt(b, m.start.UnixNano(), 10)
		b = append(b, `","timeUnixNano":"`...)
		b = strconv.AppendInt(b, now, 10)
		b = append(b, '"')
		if p.bounds == nil {
			b = append(b, `,"asDouble":`...)
			b = strconv.AppendFloat(b, p.sum, 'g', -1, 64)
			b = append(b, '}')
			continue
		}
		b = append(b, `,"count":"`...)
		b = strconv.AppendUint(b, p.count, 10)
		b = append(b, `","sum":`...)
		b = strconv.AppendFloat(b, p.sum, 'g', -1, 64)
		b = append(b, `,"min":`...)
		b = strconv.AppendFloat(b, p.min, 'g', -1, 64)
		b = append(b, `,"max":`...)
		b = strconv.AppendFloat(b, p.max, 'g', -1, 64)
		b = append(b, `,"bucketCounts":[`...)
		for j, c := range p.buckets {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendUint(b, c, 10)
			b = append(b, '"')
		}
		b = append(b, `],"explicitBounds":[`...)
		for j, x := range p.bounds {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		}
		b = append(b, `]}`...)
	}
	return append(b, `]}}`...)
}

// RecordModelCall records a model call's metrics: its duration, its
// input and output tokens and its cost; attrs are the conventions'
// (gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
// gen_ai.response.model, error.type). It does nothing without a metrics
// endpoint.
func (t *Tracer) RecordModelCall(d time.Duration, in, out int64, cost float64, attrs ...Attr) {
	if t.meter == nil {
		return
	}
	t.meter.record(MetricOperationDuration, durationBounds, d.Seconds(), attrs...)
	if in >= 0 {
		t.meter.record(MetricTokenUsage, tokenBounds, float64(in), append(slices.Clip(attrs), String("gen_ai.token.type", "input"))...)
	}
	if out >= 0 {
		t.meter.record(MetricTokenUsage, tokenBounds, float64(out), append(slices.Clip(attrs), String("gen_ai.token.type", "output"))...)
	}
	if cost > 0 {
		t.meter.record(MetricCost, nil, cost, attrs...)
	}
}

// sendMetrics posts the metrics when something was recorded since the
// last time.
func (t *Tracer) sendMetrics(ctx context.Context) error {
	if t.meter == nil {
		return nil
	}
	body := t.meter.encode(t)
	if body == nil {
		return nil
	}
	return t.post(ctx, t.cfg.MetricsEndpoint, body)
}

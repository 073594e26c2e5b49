package telemetry

import (
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config says where spans go and which are kept.
type Config struct {
	// Endpoint is the full URL spans are posted to
	// (http://localhost:4318/v1/traces when empty).
	Endpoint string
	// MetricsEndpoint is the full URL metrics are posted to; empty
	// records none.
	MetricsEndpoint string
	// MetricsInterval is how often metrics are sent (60 s when 0;
	// OTEL_METRIC_EXPORT_INTERVAL), and at Flush and Shutdown.
	MetricsInterval time.Duration
	// Headers go on every request (an API key, a tenant).
	Headers map[string]string
	// ServiceName is the resource's service.name ("zot" when empty).
	ServiceName string
	// Version is zot's version, the service's and the scope's.
	Version string
	// Resource holds further resource attributes
	// (OTEL_RESOURCE_ATTRIBUTES).
	Resource []Attr
	// Sampler decides which traces are kept.
	Sampler Sampler
	// CaptureContent puts message content on the spans: prompts,
	// answers, tool arguments and results. Off by default: they may hold
	// secrets.
	CaptureContent bool
	// BatchDelay is the longest a span waits to be sent (5 s when 0;
	// OTEL_BSP_SCHEDULE_DELAY).
	BatchDelay time.Duration
	// BatchSize is the most spans in one request (512 when 0).
	BatchSize int
	// MaxQueue is the most spans waiting; later ones are dropped (2048
	// when 0).
	MaxQueue int
	// Timeout bounds each request (10 s when 0;
	// OTEL_EXPORTER_OTLP_TIMEOUT).
	Timeout time.Duration
	// Client sends the requests (a client of its own when nil: never the
	// providers', whose traffic a tap may watch).
	Client *http.Client
	// Log is where a failure to send is said, once.
	Log io.Writer
}

func (c *Config) fill() {
	if c.Endpoint == "" {
		c.Endpoint = "http://localhost:4318/v1/traces"
	}
	if c.ServiceName == "" {
		c.ServiceName = "zot"
	}
	if c.MetricsInterval <= 0 {
		c.MetricsInterval = time.Minute
	}
	if c.BatchDelay <= 0 {
		c.BatchDelay = 5 * time.Second
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 512
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = 2048
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Client == nil {
		c.Client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConns: 2, IdleConnTimeout: 90 * time.Second}}
	}
}

// resource is the resource's attributes: service, SDK and the ones
// configured.
func (c *Config) resource() []Attr {
	attrs := []Attr{
		String("service.name", c.ServiceName),
		String("telemetry.sdk.name", "zot"),
		String("telemetry.sdk.language", "go"),
	}
	if c.Version != "" {
		attrs = append(attrs, String("service.version", c.Version), String("telemetry.sdk.version", c.Version))
	}
	attrs = append(attrs, Int("process.pid", int64(os.Getpid())))
	return dedupe(append(attrs, c.Resource...))
}

// Sampler decides whether a trace is kept, as OTEL_TRACES_SAMPLER names
// it: parentbased_always_on (the default), always_on, always_off,
// traceidratio, parentbased_always_off, parentbased_traceidratio.
type Sampler struct {
	// Name is the sampler's name ("" is parentbased_always_on).
	Name string
	// Ratio is traceidratio's fraction of traces kept, 0 to 1.
	Ratio float64
}

// sample decides for a span of trace id whose parent is parent (nil for
// a root).
func (s Sampler) sample(id TraceID, parent *SpanContext) bool {
	name := s.Name
	if strings.HasPrefix(name, "parentbased_") || name == "" {
		if parent != nil {
			return parent.Sampled
		}
		name = strings.TrimPrefix(name, "parentbased_")
	}
	switch name {
	case "always_off":
		return false
	case "traceidratio":
		// The trace id's last 8 bytes against the ratio, as every SDK
		// does, so every process of a trace decides alike.
		bound := uint64(s.Ratio * (1 << 63))
		return binary.BigEndian.Uint64(id[8:16])>>1 < bound
	}
	return true
}

// Env names the settings FromEnv reads, for a command's help.
const Env = "OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, OTEL_METRICS_EXPORTER, OTEL_METRIC_EXPORT_INTERVAL"

// FromEnv reads the standard OTEL_* variables through getenv. on says
// whether traces are on: asked for (force, the --otel flag) or an
// endpoint is set, and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none says otherwise. A value that does not parse
// is an error naming the variable.
func FromEnv(getenv func(string) string, force bool) (cfg Config, on bool, err error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return cfg, false, nil
	}
	if exp := getenv("OTEL_TRACES_EXPORTER"); exp != "" && !strings.EqualFold(exp, "otlp") {
		return cfg, false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: zot sends traces over OTLP only (otlp or none)", exp)
	}
	if p := firstOf(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); p == "grpc" {
		return cfg, false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: zot sends OTLP over HTTP (http/json); point it at the receiver's HTTP port (4318)")
	}
	if ep := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); ep != "" {
		cfg.Endpoint = ep // used as is, as the specification says
	} else if ep := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); ep != "" {
		cfg.Endpoint = strings.TrimSuffix(ep, "/") + "/v1/traces"
	}
	switch {
	case strings.EqualFold(getenv("OTEL_METRICS_EXPORTER"), "none"):
	case getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "":
		cfg.MetricsEndpoint = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		cfg.MetricsEndpoint = strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/metrics"
	case force && cfg.Endpoint == "":
		cfg.MetricsEndpoint = "http://localhost:4318/v1/metrics"
	}
	for _, ep := range []string{cfg.Endpoint, cfg.MetricsEndpoint} {
		if ep == "" {
			continue
		}
		u, perr := url.Parse(ep)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, false, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", ep)
		}
	}
	on = force || cfg.Endpoint != "" || cfg.MetricsEndpoint != ""
	cfg.Headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		kv, perr := parseList(getenv(name))
		if perr != nil {
			return cfg, false, fmt.Errorf("%s: %w", name, perr)
		}
		for _, p := range kv {
			cfg.Headers[p[0]] = p[1]
		}
	}
	cfg.ServiceName = getenv("OTEL_SERVICE_NAME")
	res, perr := parseList(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if perr != nil {
		return cfg, false, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", perr)
	}
	for _, p := range res {
		if p[0] == "service.name" && cfg.ServiceName == "" {
			cfg.ServiceName = p[1]
			continue
		}
		cfg.Resource = append(cfg.Resource, String(p[0], p[1]))
	}
	cfg.Sampler.Name = strings.ToLower(getenv("OTEL_TRACES_SAMPLER"))
	switch cfg.Sampler.Name {
	case "", "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
	case "traceidratio", "parentbased_traceidratio":
		cfg.Sampler.Ratio = 1
		if arg := getenv("OTEL_TRACES_SAMPLER_ARG"); arg != "" {
			r, perr := strconv.ParseFloat(arg, 64)
			if perr != nil || r < 0 || r > 1 {
				return cfg, false, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%s: want a number from 0 to 1", arg)
			}
			cfg.Sampler.Ratio = r
		}
	default:
		return cfg, false, fmt.Errorf("OTEL_TRACES_SAMPLER=%s: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", cfg.Sampler.Name)
	}
	cfg.CaptureContent = strings.EqualFold(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "true")
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"OTEL_BSP_SCHEDULE_DELAY", &cfg.BatchDelay}, {"OTEL_METRIC_EXPORT_INTERVAL", &cfg.MetricsInterval}, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", &cfg.Timeout}, {"OTEL_EXPORTER_OTLP_TIMEOUT", &cfg.Timeout}} {
		v := getenv(d.name)
		if v == "" || *d.to != 0 {
			continue
		}
		ms, perr := strconv.Atoi(v)
		if perr != nil || ms < 0 {
			return cfg, false, fmt.Errorf("%s=%s: want milliseconds", d.name, v)
		}
		*d.to = time.Duration(ms) * time.Millisecond
	}
	return cfg, on, nil
}

func firstOf(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return strings.ToLower(v)
		}
	}
	return ""
}

// parseList reads "k1=v1,k2=v2" with URL-encoded values (W3C baggage
// form, as the OTLP headers and resource variables are).
func parseList(s string) ([][2]string, error) {
	var out [][2]string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", item)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %s: %w", k, err)
		}
		out = append(out, [2]string{k, dv})
	}
	return out, nil
}

package main

import (
	"context"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/telemetry"
	"zot.dev/zot/internal/telemetry/genai"
)

// otelFlags turn on OpenTelemetry traces in every command that runs
// turns (docs/telemetry.md).
func otelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "otel", Usage: "send OpenTelemetry traces and metrics (GenAI conventions) over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); also on when an OTEL_EXPORTER_OTLP_*ENDPOINT is set (see docs/telemetry.md)"},
		&cli.BoolFlag{Name: "otel-content", Usage: "with traces on: record prompts, answers, tool arguments and results on the spans (as OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"},
	}
}

// otelNow is the process's tracer: made by the first command that reads
// the agent flags, sent out when the command returns.
var otelNow struct {
	mu     sync.Mutex
	read   bool
	genai  *genai.Recorder
	tracer *telemetry.Tracer
}

// startTelemetry reads --otel, --otel-content and the OTEL_* variables
// and, when traces are on, starts the process's tracer (once).
func startTelemetry(cmd *cli.Command, log io.Writer) error {
	otelNow.mu.Lock()
	defer otelNow.mu.Unlock()
	if otelNow.read {
		return nil
	}
	otelNow.read = true
	cfg, on, err := telemetry.FromEnv(os.Getenv, cmd.Bool("otel"))
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	if !on {
		if cmd.Bool("otel-content") {
			return &exitError{code: 2, msg: "--otel-content needs traces on: --otel or OTEL_EXPORTER_OTLP_ENDPOINT"}
		}
		return nil
	}
	cfg.CaptureContent = cfg.CaptureContent || cmd.Bool("otel-content")
	cfg.Version = buildinfo.Version()
	cfg.Log = log
	otelNow.tracer = telemetry.New(cfg)
	otelNow.genai = &genai.Recorder{
		Tracer:       otelNow.tracer,
		Conversation: func(s *engine.Session) string { return s.StoredID() },
	}
	return nil
}

// withTelemetry adds the tracer's spans to a host's configuration, around
// the middleware already there (the inspector's tap).
func withTelemetry(hc *engine.HostConfig) {
	otelNow.mu.Lock()
	g := otelNow.genai
	otelNow.mu.Unlock()
	if g == nil {
		return
	}
	catalog := hc.Catalog
	g.Cost = func(provider, model string, u llm.Usage) float64 {
		if catalog == nil {
			return 0
		}
		return catalog.Resolve(provider, model).Cost(u)
	}
	inner := hc.SessionMiddleware
	hc.SessionMiddleware = func(s *engine.Session) ([]agent.ModelMiddleware, []agent.ToolMiddleware) {
		model, tool := g.Middleware(s)
		if inner != nil {
			m, t := inner(s)
			model, tool = slices.Concat(model, m), slices.Concat(tool, t)
		}
		return model, tool
	}
	if prev := hc.WorkHook; prev != nil {
		hc.WorkHook = func(s *engine.Session, ctx context.Context, w engine.WorkInfo) (context.Context, func(error)) {
			ctx, end1 := g.WorkHook(s, ctx, w)
			ctx, end2 := prev(s, ctx, w)
			return ctx, func(err error) {
				if end2 != nil {
					end2(err)
				}
				end1(err)
			}
		}
	} else {
		hc.WorkHook = g.WorkHook
	}
}

// stopTelemetry sends the spans not sent yet, waiting at most a few
// seconds for the receiver.
func stopTelemetry() {
	otelNow.mu.Lock()
	t := otelNow.tracer
	otelNow.mu.Unlock()
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.Shutdown(ctx) // a failure was said on the log as it happened
}

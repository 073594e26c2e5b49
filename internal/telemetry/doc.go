// Package telemetry records zot's work as OpenTelemetry traces in the
// GenAI semantic conventions and sends them to an OTLP/HTTP receiver
// (Jaeger, Grafana Tempo, Langfuse, a collector) as JSON.
//
// It is zot's own small span recorder and OTLP/HTTP JSON encoder rather
// than the official Go SDK: the SDK with its OTLP exporter runs package
// inits at every start of every zot process (protobuf's and gRPC's
// registries among them) and grows the binary by about 15 MB, which
// zot rpc's spawn and memory goals cannot pay for; docs/telemetry.md has
// the numbers. The tests decode what it sends with the official OTLP
// protobuf types (go.opentelemetry.io/proto/otlp) through protojson.
//
// A Tracer is made from the standard OTEL_* variables (Config,
// FromEnv). Its spans are kept in a bounded queue and exported in
// batches by one goroutine that Shutdown waits for; a full queue drops
// spans (counted) rather than slowing the agent. Package genai gives
// the engine's seams their spans (invoke_agent per prompt, chat per model
// call, execute_tool per tool call); StartChild lets any package add a
// span under the current one (an extension's intercept, an MCP call) at
// the cost of a context lookup when telemetry is off. The package imports
// nothing of zot's, so every package may use it.
package telemetry

// Package responses is zot's provider for the OpenAI Responses API, with
// streaming, function calls and reasoning summaries. Calls are stateless
// (store is false): the whole transcript is sent each time, and the
// encrypted reasoning items a model produced are kept in the transcript and
// sent back, so that a reasoning model keeps its reasoning across a tool
// loop.
package responses

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"zot.dev/zot/internal/provider/reqbody"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// Defaults for Config fields left empty.
const (
	defaultBaseURL = "https://api.openai.com/v1"
	defaultName    = "openai-responses"
	// reasoningIdleTimeout is the idle timeout of calls that reason when
	// Options leaves it unset: the stream may carry no bytes while the
	// model reasons, which can take minutes.
	reasoningIdleTimeout = 10 * time.Minute
)

// Config configures a Provider.
type Config struct {
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (a local server or a proxy that adds its own).
	APIKey string
	// BaseURL is the API root including /v1, default
	// https://api.openai.com/v1. The provider appends /responses (unless
	// the base already ends with it); a trailing slash is ignored.
	BaseURL string
	// Name is the provider id reported by Name, in errors and in the
	// ThinkingBlock.Provider of the reasoning it returns, default
	// "openai-responses".
	Name string
	// Options configures retries and stream timeouts. When IdleTimeout is
	// unset, calls that reason (Request.ReasoningModel or a Reasoning
	// effort) allow 10 minutes without a byte instead of httpcall's
	// default.
	Options httpcall.Options
	// Headers are extra request headers. They override the provider's own.
	Headers map[string]string
}

// Provider streams model calls from a Responses API endpoint. It is safe
// for concurrent use.
type Provider struct {
	name   string
	url    string
	header http.Header
	opt    httpcall.Options
	bufs   reqbody.Buffers      // the buffer of the last body sent
	tools  reqbody.ToolCache    // the encoded tool list of the last request
	msgs   reqbody.MessageCache // the encoded input items of the last request
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	p := &Provider{name: cfg.Name, url: endpoint(cfg.BaseURL), header: http.Header{}, opt: cfg.Options}
	if p.name == "" {
		p.name = defaultName
	}
	if cfg.APIKey != "" {
		p.header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	p.header.Set("Content-Type", "application/json")
	for k, v := range cfg.Headers {
		p.header.Set(k, v)
	}
	return p
}

// Name returns the configured provider id, "openai-responses" by default.
func (p *Provider) Name() string { return p.name }

// endpoint joins base and the responses path.
func endpoint(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	switch {
	case base == "":
		return defaultBaseURL + "/responses"
	case strings.HasSuffix(base, "/responses"):
		return base
	}
	return base + "/responses"
}

// Stream makes one Responses API call, reporting events to sink. A
// retryable failure (an HTTP status, a connect error, a retryable error
// event, a cut or stalled stream) re-issues the whole call as long as
// nothing beyond EventStart has been reported; EventStart itself is
// reported once.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	body, err := buildPayload(req, p.name, &p.tools, &p.msgs, &p.bufs)
	if err != nil {
		return httpcall.Failed(nil), fmt.Errorf("%s: building request: %w", p.name, err)
	}
	defer body.Release()
	var idle time.Duration
	if reasons(req) {
		idle = reasoningIdleTimeout
	}
	return httpcall.StreamModel(ctx, httpcall.ModelCall{
		Provider: p.name, URL: p.url, Header: p.header, Body: body, DecodeError: decodeError,
		Options: p.opt, Idle: idle,
		Assembler: func(sink llm.Sink) httpcall.Assembler { return newAssembler(p.name, sink) },
	}, sink)
}

// reasons reports whether a call asks for reasoning.
func reasons(req *llm.Request) bool { return req.ReasoningModel || req.Reasoning != "" }

// wireError is an error object: {"message":"...","type":"...","code":...}.
// code may be a string, a number or null.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// code returns the error's code when it is a string.
func (e *wireError) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return ""
}

// kind is the error's code, or its type when it has no code: the code
// ("rate_limit_exceeded", "server_error") is the more specific of the two.
func (e *wireError) kind() string {
	if c := e.code(); c != "" {
		return c
	}
	return e.Type
}

// decodeError reads an error body for httpcall.Post:
// {"error":{"message":"...","type":"...","code":"..."}}.
func decodeError(status int, body []byte) (kind, message string) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Error) == 0 || string(v.Error) == "null" {
		return "", ""
	}
	var e wireError
	if json.Unmarshal(v.Error, &e) == nil {
		return e.kind(), e.Message
	}
	var msg string
	if json.Unmarshal(v.Error, &msg) == nil {
		return "", msg
	}
	return "", ""
}

// retryableKind reports whether an error code or type names a transient
// failure.
func retryableKind(k string) bool {
	switch k {
	case "server_error", "rate_limit_exceeded", "rate_limit_error", "server_is_overloaded",
		"overloaded_error", "slow_down", "api_error", "timeout", "vector_store_timeout":
		return true
	}
	return false
}

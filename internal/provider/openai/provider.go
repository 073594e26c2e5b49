// Package openai is zot's provider for the OpenAI Chat Completions API and
// the many servers that speak it (OpenRouter, DeepSeek, local servers),
// with streaming, tool calls and streamed reasoning text.
package openai

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
	defaultName    = "openai"
	// reasoningIdleTimeout is the idle timeout for reasoning models when
	// Options leaves it unset: Chat Completions sends no bytes while such
	// a model reasons, which can take minutes.
	reasoningIdleTimeout = 10 * time.Minute
)

// Config configures a Provider.
type Config struct {
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (local servers).
	APIKey string
	// BaseURL is the API root including /v1, default
	// https://api.openai.com/v1. The provider appends /chat/completions
	// (unless the base already ends with it); a trailing slash is ignored.
	BaseURL string
	// Name is the provider id reported by Name and in errors, default
	// "openai".
	Name string
	// Options configures retries and stream timeouts. When IdleTimeout is
	// unset, calls to reasoning models (Request.ReasoningModel) allow 10
	// minutes without a byte instead of httpcall's default.
	Options httpcall.Options
	// Headers are extra request headers (OpenRouter's HTTP-Referer and
	// X-Title, for example). They override the provider's own.
	Headers map[string]string
	// Responses, when set, makes the calls for models that refuse function
	// tools with reasoning on Chat Completions
	// (Request.NoChatToolsReasoning). Without it such calls go to Chat
	// Completions with reasoning_effort "none" whenever tools are offered.
	// Set it only for OpenAI's own endpoint: the registry does so when no
	// --base-url is given.
	Responses llm.Provider
}

// Provider streams model calls from a Chat Completions endpoint. It is safe
// for concurrent use.
type Provider struct {
	name      string
	url       string
	header    http.Header
	opt       httpcall.Options
	responses llm.Provider         // see Config.Responses
	bufs      reqbody.Buffers      // the buffer of the last body sent
	tools     reqbody.ToolCache    // the encoded tool list of the last request
	msgs      reqbody.MessageCache // the encoded messages of the last request
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	p := &Provider{name: cfg.Name, url: endpoint(cfg.BaseURL), header: http.Header{}, opt: cfg.Options, responses: cfg.Responses}
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

// Name returns the configured provider id, "openai" by default.
func (p *Provider) Name() string { return p.name }

// endpoint joins base and the chat completions path.
func endpoint(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	switch {
	case base == "":
		return defaultBaseURL + "/chat/completions"
	case strings.HasSuffix(base, "/chat/completions"):
		return base
	}
	return base + "/chat/completions"
}

// Stream makes one Chat Completions call, reporting events to sink. A
// retryable failure (an HTTP status, a connect error, an error chunk, a cut
// stream) re-issues the whole call as long as nothing beyond EventStart has
// been reported; EventStart itself is reported once.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	if req.NoChatToolsReasoning && p.responses != nil {
		return p.responses.Stream(ctx, req, sink)
	}
	body, err := buildPayload(req, p.name, &p.tools, &p.msgs, &p.bufs)
	if err != nil {
		return httpcall.Failed(nil), fmt.Errorf("%s: building request: %w", p.name, err)
	}
	defer body.Release()
	var idle time.Duration
	if req.ReasoningModel {
		idle = reasoningIdleTimeout
	}
	return httpcall.StreamModel(ctx, httpcall.ModelCall{
		Provider: p.name, URL: p.url, Header: p.header, Body: body, DecodeError: decodeError,
		Options: p.opt, Idle: idle,
		Assembler: func(sink llm.Sink) httpcall.Assembler { return newAssembler(p.name, sink) },
	}, sink)
}

// wireError is the error object of an error body or an error chunk:
// {"error":{"message":"...","type":"...","code":...}}. Some servers send a
// bare string as "error", and code may be a string or a number.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// kind is the error's type, or its code when it has no type.
func (e *wireError) kind() string {
	if e.Type != "" {
		return e.Type
	}
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return ""
}

// parseError extracts the error object of body, if it has one.
func parseError(body []byte) (*wireError, bool) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Error) == 0 || string(v.Error) == "null" {
		return nil, false
	}
	var e wireError
	if json.Unmarshal(v.Error, &e) == nil {
		return &e, true
	}
	var msg string
	if json.Unmarshal(v.Error, &msg) == nil {
		return &wireError{Message: msg}, true
	}
	return nil, false
}

// decodeError reads an error body for httpcall.Post.
func decodeError(status int, body []byte) (kind, message string) {
	e, ok := parseError(body)
	if !ok {
		return "", ""
	}
	return e.kind(), e.Message
}

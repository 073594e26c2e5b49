// Package gemini is zot's provider for Google's Gemini API
// (streamGenerateContent over Server-Sent Events), with streamed thought
// summaries, function calling and the thought signatures Gemini needs back
// in tool loops.
package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"zot.dev/zot/internal/provider/reqbody"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// providerName is the id reported by Name and in errors.
const providerName = "gemini"

// Defaults for Config fields left empty.
const (
	defaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"
	// thinkingIdleTimeout is the idle timeout of calls that think when
	// Options leaves it unset: the stream may carry no bytes while the
	// model thinks, which can take minutes.
	thinkingIdleTimeout = 10 * time.Minute
)

// Config configures a Provider.
type Config struct {
	// APIKey is sent as x-goog-api-key; empty sends no key (for a proxy
	// that adds its own).
	APIKey string
	// BaseURL is the API root including the version, default
	// https://generativelanguage.googleapis.com/v1beta. The provider
	// appends /models/{model}:streamGenerateContent?alt=sse; a trailing
	// slash is ignored.
	BaseURL string
	// Options configures retries and stream timeouts. When IdleTimeout is
	// unset, calls that think (Request.ReasoningModel or a Reasoning
	// effort) allow 10 minutes without a byte instead of httpcall's
	// default.
	Options httpcall.Options
}

// Provider streams model calls from the Gemini API. It is safe for
// concurrent use.
type Provider struct {
	base   string
	header http.Header
	opt    httpcall.Options
	bufs   reqbody.Buffers   // the buffer of the last body sent
	tools  reqbody.ToolCache // the encoded tool list of the last request
	msgs   messageCaches     // the encoded messages of the last request
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	p := &Provider{base: strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/"), header: http.Header{}, opt: cfg.Options}
	if p.base == "" {
		p.base = defaultBaseURL
	}
	if cfg.APIKey != "" {
		p.header.Set("x-goog-api-key", cfg.APIKey)
	}
	p.header.Set("Content-Type", "application/json")
	return p
}

// Name returns "gemini".
func (p *Provider) Name() string { return providerName }

// endpoint is the streaming URL of model. A "models/" prefix on the id is
// accepted.
func (p *Provider) endpoint(model string) string {
	model = strings.TrimPrefix(model, "models/")
	return p.base + "/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse"
}

// Stream makes one streamGenerateContent call, reporting events to sink. A
// retryable failure (an HTTP status, a connect error, an error chunk, a
// malformed function call, a cut or stalled stream) re-issues the whole
// call as long as nothing beyond EventStart has been reported; EventStart
// itself is reported once.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	body, err := buildPayload(req, &p.tools, &p.msgs, &p.bufs)
	if err != nil {
		return httpcall.Failed(nil), fmt.Errorf("%s: building request: %w", providerName, err)
	}
	defer body.Release()
	target := p.endpoint(req.Model)
	var idle time.Duration
	if req.ReasoningModel || req.Reasoning != "" {
		idle = thinkingIdleTimeout
	}
	return httpcall.StreamModel(ctx, httpcall.ModelCall{
		Options: p.opt, Idle: idle,
		Open: func(ctx context.Context, once httpcall.Options) (*httpcall.Stream, error) {
			return p.post(ctx, target, body, once)
		},
		Assembler: func(sink llm.Sink) httpcall.Assembler { return newAssembler(sink) },
	}, sink)
}

// post makes one request. Gemini states the delay it wants in the error
// body (a google.rpc.RetryInfo detail) rather than in Retry-After; post
// puts it on the error when no header gave one.
func (p *Provider) post(ctx context.Context, target string, body httpcall.Body, opt httpcall.Options) (*httpcall.Stream, error) {
	var delay time.Duration
	decode := func(status int, body []byte) (kind, message string) {
		e, ok := parseError(body)
		if !ok {
			return "", ""
		}
		delay = e.retryDelay()
		return e.Status, e.Message
	}
	s, err := httpcall.PostFrom(ctx, providerName, target, p.header, body, opt, decode)
	var le *llm.Error
	if err != nil && delay > 0 && errors.As(err, &le) && le.Retryable && le.RetryAfter == 0 {
		le.RetryAfter = delay
	}
	return s, err
}

// wireError is a Google API error object:
// {"code":429,"message":"...","status":"RESOURCE_EXHAUSTED","details":[...]}.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// retryDelay is the delay of the error's RetryInfo detail, or 0.
func (e *wireError) retryDelay() time.Duration {
	for _, d := range e.Details {
		if !strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			continue
		}
		if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// retryable reports whether the error names a transient failure.
func (e *wireError) retryable() bool {
	switch e.Status {
	case "RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED":
		return true
	}
	switch e.Code {
	case 408, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// parseError extracts the error object of an error body: {"error":{...}},
// or the same wrapped in a one-element array.
func parseError(body []byte) (*wireError, bool) {
	type envelope struct {
		Error *wireError `json:"error"`
	}
	var v envelope
	if json.Unmarshal(body, &v) == nil && v.Error != nil {
		return v.Error, true
	}
	var list []envelope
	if json.Unmarshal(body, &list) == nil && len(list) > 0 && list[0].Error != nil {
		return list[0].Error, true
	}
	return nil, false
}

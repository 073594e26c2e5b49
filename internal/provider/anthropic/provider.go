// Package anthropic is zot's provider for Anthropic's Messages API with
// streaming, extended thinking, tool use and prompt caching.
package anthropic

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

// providerName is the id reported by Name and in errors.
const providerName = "anthropic"

// thinkingIdleTimeout is the idle timeout of calls that may think, when
// Options leave it unset: a model may think for minutes before its first
// byte of visible output (the other providers allow the same).
const thinkingIdleTimeout = 10 * time.Minute

// thinks reports whether a call may think: the model reasons, or a
// reasoning level other than none was asked for.
func thinks(req *llm.Request) bool {
	return req.ReasoningModel || req.AlwaysReasons || req.ThinksByDefault || req.Reasoning != "" && req.Reasoning != "none"
}

// Defaults for Config fields left empty.
const (
	defaultBaseURL = "https://api.anthropic.com"
	defaultVersion = "2023-06-01"
)

// Config configures a Provider.
type Config struct {
	// APIKey is sent as x-api-key; empty sends no key (for a proxy that
	// adds its own).
	APIKey string
	// BaseURL is the API host root, default https://api.anthropic.com. The
	// provider appends /v1/messages; a base that already ends in /v1 gets
	// only /messages, and a trailing slash is ignored.
	BaseURL string
	// Options configures retries and stream timeouts. When IdleTimeout is
	// unset, calls that may think (a reasoning model, or a reasoning
	// level given) allow 10 minutes without a byte, others 90 seconds.
	Options httpcall.Options
	// Version is the anthropic-version header, default "2023-06-01".
	Version string
}

// Provider streams model calls from the Anthropic Messages API. It is safe
// for concurrent use.
type Provider struct {
	apiKey  string
	url     string
	version string
	opt     httpcall.Options
	bufs    reqbody.Buffers      // the buffer of the last body sent
	head    headCache            // the encoded head of the last request
	tools   reqbody.ToolCache    // the encoded tool list of the last request
	msgs    reqbody.MessageCache // the encoded messages of the last request
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	p := &Provider{apiKey: cfg.APIKey, url: endpoint(cfg.BaseURL), version: cfg.Version, opt: cfg.Options}
	if p.version == "" {
		p.version = defaultVersion
	}
	return p
}

// Name returns "anthropic".
func (p *Provider) Name() string { return providerName }

// endpoint joins base and the messages path.
func endpoint(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	switch {
	case base == "":
		return defaultBaseURL + "/v1/messages"
	case strings.HasSuffix(base, "/v1/messages"):
		return base
	case strings.HasSuffix(base, "/v1"):
		return base + "/messages"
	}
	return base + "/v1/messages"
}

// Stream makes one Messages API call, reporting events to sink. A
// retryable failure (an HTTP status, a connect error, an overloaded error
// event, a cut stream) re-issues the whole call as long as nothing beyond
// EventStart has been reported; EventStart itself is reported once.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	body, prefix, err := buildPayload(req, caches{head: &p.head, tools: &p.tools, msgs: &p.msgs, bufs: &p.bufs})
	if err != nil {
		return httpcall.Failed(nil), fmt.Errorf("%s: building request: %w", providerName, err)
	}
	defer body.Release()
	header := http.Header{}
	if p.apiKey != "" {
		header.Set("x-api-key", p.apiKey)
	}
	header.Set("anthropic-version", p.version)
	header.Set("content-type", "application/json")

	resp, err := httpcall.StreamModel(ctx, httpcall.ModelCall{
		Provider: providerName, URL: p.url, Header: header, Body: body, DecodeError: decodeError,
		Options: p.opt, Idle: idleTimeout(req),
		Assembler: func(sink llm.Sink) httpcall.Assembler { return newAssembler(sink) },
	}, sink)
	if err == nil {
		stamp(&resp.Message, req.Model, prefix)
	}
	return resp, err
}

// idleTimeout is the idle timeout of an attempt of req when the options
// set none: a call that may think gets the longer one.
func idleTimeout(req *llm.Request) time.Duration {
	if thinks(req) {
		return thinkingIdleTimeout
	}
	return 0
}

// decodeError reads an Anthropic error body:
// {"type":"error","error":{"type":"...","message":"..."}}.
func decodeError(status int, body []byte) (kind, message string) {
	var v struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil {
		return "", ""
	}
	return v.Error.Type, v.Error.Message
}

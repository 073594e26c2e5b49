// Package scripted is zot's offline model provider: it needs no network and
// no key, and answers by playing a script of assistant turns (see [Script]
// and docs/providers.md). It streams the same events a real provider does,
// fails the same ways when the script says so, and is deterministic: the
// same transcript always gets the same answer. Demos, tests and benchmarks
// of the agent run on it.
package scripted

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// providerName is the id reported by Name and in errors.
const providerName = "scripted"

// maxRetryWait caps the wait between attempts of a failing step, so that
// scripts exercising retries stay fast.
const maxRetryWait = 50 * time.Millisecond

// Config configures a Provider.
type Config struct {
	// Script is what the provider plays; nil means [Default]. It must not
	// be changed while the provider is in use.
	Script *Script
	// Sleep waits for d or until ctx is done, returning ctx.Err() then. It
	// is used for each step's Delay and between retried attempts. nil
	// means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Provider plays a script. It is safe for concurrent use.
type Provider struct {
	script *Script
	sleep  func(ctx context.Context, d time.Duration) error
	retry  httpcall.Options
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	p := &Provider{script: cfg.Script, sleep: cfg.Sleep}
	if p.script == nil {
		p.script = Default()
	}
	if p.sleep == nil {
		p.sleep = sleep
	}
	// Real providers' policy (attempt budget, which errors are retried, when
	// a server-requested delay is too long to wait for), with each wait
	// capped at maxRetryWait. A 1ns base delay makes the backoff used when a
	// failure asks for no delay practically zero.
	p.retry = httpcall.Options{
		BaseDelay: time.Nanosecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			return p.sleep(ctx, min(d, maxRetryWait))
		},
	}
	return p
}

// Name returns "scripted".
func (p *Provider) Name() string { return providerName }

// Stream plays the step of the script that req's transcript has reached.
// It reports events to sink as a real provider does and returns the
// assembled response; after a failure or cancellation it returns what was
// streamed so far with the error (ctx.Err() after cancellation).
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	if err := checkScript(p.script); err != nil {
		return failed(llm.StopError), err
	}
	if sink == nil {
		sink = func(llm.Event) {}
	}
	pos := locate(p.script, req.Messages)
	st := &p.script.Turns[pos.turn].Steps[pos.step]
	if f := st.Error; f != nil && f.Status > 0 {
		attempt := 0
		err := httpcall.Retry(ctx, p.retry, func(context.Context) error {
			attempt++
			if f.Times == 0 || attempt <= f.Times {
				return statusError(f)
			}
			return nil
		})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return failed(llm.StopAborted), cerr
			}
			return failed(llm.StopError), err
		}
	}
	if err := ctx.Err(); err != nil {
		return failed(llm.StopAborted), err
	}
	pl := newPlayer(ctx, p.sleep, sink, st, pos, req)
	return pl.play()
}

// checkScript rejects a script that has nothing to play. Parse never
// returns one, but a script built in Go may be one.
func checkScript(s *Script) error {
	if len(s.Turns) == 0 {
		return fmt.Errorf("%s: the script has no turns", providerName)
	}
	for i, t := range s.Turns {
		if len(t.Steps) == 0 {
			return fmt.Errorf("%s: turn %d of the script has no steps", providerName, i)
		}
	}
	return nil
}

// statusError is the error of a failed attempt of f.
func statusError(f *Failure) error {
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(f.Status)
	}
	return &llm.Error{
		Provider:   providerName,
		Status:     f.Status,
		Kind:       f.Kind,
		Message:    msg,
		Retryable:  retryableStatus(f.Status),
		RetryAfter: f.RetryAfter,
	}
}

// retryableStatus reports whether real providers retry an HTTP status.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// failed returns the response of a call that failed before any output.
func failed(stop llm.StopReason) *llm.Response {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Stop: stop}
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

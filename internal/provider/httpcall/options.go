package httpcall

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options configures retries and stream timeouts; zero values mean the defaults.
type Options struct {
	// HTTPClient sends the requests. nil means a shared client with no
	// overall timeout (streams are long) and bounded dial, TLS handshake and
	// response-header waits.
	HTTPClient *http.Client
	// MaxAttempts bounds the tries of one call; default 4 (1 try + 3 retries).
	MaxAttempts int
	// BaseDelay is the first backoff step; default 500ms. Delays grow
	// exponentially with full jitter and are capped by MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps one backoff delay; default 30s. A server-requested delay
	// longer than 4*MaxDelay is not waited for.
	MaxDelay time.Duration
	// IdleTimeout is how long an open stream may go without a byte before
	// reading it fails; default 90s.
	IdleTimeout time.Duration
	// Sleep waits between attempts. It is a test hook; the default waits for
	// d or until ctx is done, returning ctx.Err() in the latter case.
	Sleep func(ctx context.Context, d time.Duration) error
}

// The defaults behind zero Options fields.
const (
	defaultMaxAttempts = 4
	defaultBaseDelay   = 500 * time.Millisecond
	defaultMaxDelay    = 30 * time.Second
	defaultIdleTimeout = 90 * time.Second
)

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = defaultClient()
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = defaultMaxAttempts
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = defaultBaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = defaultMaxDelay
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return o
}

// DefaultClient returns the client providers share when given none: a
// decorator (a traffic tap, a recorder) wraps its Transport to keep its
// dial, TLS and header timeouts.
func DefaultClient() *http.Client { return defaultClient() }

// defaultClient is shared by every provider so that connections are reused.
// The response-header wait is generous because a local server may process a
// long prompt before it answers.
var defaultClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		ExpectContinueTimeout: 1 * time.Second,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		// A request body bigger than the write buffer goes to a plain-TCP
		// connection (a local model server) through a copy buffer that
		// net/http allocates per request; a long transcript's body would
		// cost one on every model call.
		WriteBufferSize: 64 << 10,
	}}
})

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

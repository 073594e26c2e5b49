package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Post sends body as JSON to url with header and returns the open event
// stream once a 2xx arrives.
//
// It retries connect errors and the statuses the vendors' SDKs retry (an
// x-should-retry header first, else 408, 409, 429 and every 5xx; see
// retryable) with jittered exponential backoff, honouring Retry-After
// (seconds or HTTP date) and retry-after-ms, up to MaxAttempts; a Retry-After longer than
// MaxDelay*4 is not waited for (the error is returned, Retryable with
// RetryAfter set). A final non-2xx becomes *llm.Error{Provider, Status, Kind,
// Message, Retryable, RetryAfter} where decodeErr (may be nil) extracts the
// vendor's error type and message from the body (read up to 1 MiB). ctx
// cancellation at any point returns an error for which errors.Is(err,
// ctx.Err()) holds.
//
// Content-Type defaults to application/json and Accept to text/event-stream
// when header does not set them. The caller must Close the returned Stream.
func Post(ctx context.Context, provider, url string, header http.Header, body []byte, opt Options,
	decodeErr func(status int, body []byte) (kind, message string)) (*Stream, error) {
	return PostFrom(ctx, provider, url, header, bytesBody(body), opt, decodeErr)
}

// Body is a request body that can be read again from its start for each
// attempt, of a length known beforehand.
type Body interface {
	Len() int64
	Reader() io.Reader
}

// bytesBody is a Body held in one slice.
type bytesBody []byte

func (b bytesBody) Len() int64        { return int64(len(b)) }
func (b bytesBody) Reader() io.Reader { return bytes.NewReader(b) }

// PostFrom is [Post] with a body that is read as it is sent rather than
// held in one slice.
func PostFrom(ctx context.Context, provider, url string, header http.Header, body Body, opt Options,
	decodeErr func(status int, body []byte) (kind, message string)) (*Stream, error) {
	opt = opt.withDefaults()
	if err := checkURL(url); err != nil {
		return nil, fmt.Errorf("%s: %w", provider, err)
	}
	var s *Stream
	err := Retry(ctx, opt, func(ctx context.Context) error {
		var err error
		s, err = postOnce(ctx, provider, url, header, body, opt, decodeErr)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// postOnce makes one attempt. On success the Stream owns the request's
// context and body.
func postOnce(ctx context.Context, provider, url string, header http.Header, body Body, opt Options,
	decodeErr func(status int, body []byte) (kind, message string)) (*Stream, error) {
	reqCtx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, url, body.Reader())
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: building request: %w", provider, err)
	}
	if _, ok := body.(bytesBody); !ok {
		// net/http knows the length and how to start over only for its
		// own reader types.
		req.ContentLength = body.Len()
		req.GetBody = func() (io.ReadCloser, error) { return readCloser(body.Reader()), nil }
		if req.ContentLength == 0 {
			req.Body = http.NoBody
		}
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := opt.HTTPClient.Do(req)
	if err != nil {
		cancel()
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%s: sending request: %w", provider, cerr)
		}
		return nil, connectError(provider, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer cancel()
		err := statusError(provider, resp, decodeErr, time.Now())
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%s: reading error response: %w", provider, cerr)
		}
		return nil, err
	}
	return newStream(ctx, cancel, provider, resp.Body, opt.IdleTimeout), nil
}

// checkURL rejects what no retry can fix: a malformed URL, a scheme other
// than http(s), a missing host.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("invalid url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("invalid url %q: no host", raw)
	}
	return nil
}

// readCloser returns r as an io.ReadCloser: itself when it is one (a body
// whose reader tells it when the transport is done with it), else with a
// Close that does nothing.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

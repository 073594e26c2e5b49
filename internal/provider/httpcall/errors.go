package httpcall

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/llm"
)

// maxErrorBody caps how much of an error response is read.
const maxErrorBody = 1 << 20

// maxBodyInMessage caps how much raw body text becomes an error message when
// the vendor's decoder found none.
const maxBodyInMessage = 2000

// retryable reports whether a failed response is worth retrying, as the
// vendors' official SDKs decide (@anthropic-ai/sdk 1.12.0 and openai 7.57.0,
// src/client.ts, shouldRetry): the server's x-should-retry header when it
// says "true" or "false", else request timeouts (408), lock timeouts (409),
// rate limits (429) and every 5xx, Anthropic's 529 "overloaded" included.
func retryable(code int, h http.Header) bool {
	switch h.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooManyRequests:
		return true
	}
	return code >= 500
}

// statusError reads a non-2xx response into an *llm.Error and closes its body.
func statusError(provider string, resp *http.Response, decodeErr func(int, []byte) (string, string), now time.Time) error {
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &llm.Error{
		Provider:   provider,
		Status:     resp.StatusCode,
		Retryable:  retryable(resp.StatusCode, resp.Header),
		RetryAfter: retryAfter(resp.Header, now),
	}
	if decodeErr != nil && len(body) > 0 {
		e.Kind, e.Message = decodeErr(resp.StatusCode, body)
	}
	if e.Message == "" {
		e.Message = bodyMessage(body)
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
		if readErr != nil {
			e.Message += " (reading body: " + readErr.Error() + ")"
		}
	}
	return e
}

// bodyMessage turns an undecoded error body into a short message, or ""
// when it is not text.
func bodyMessage(body []byte) string {
	s := strings.TrimSpace(string(body))
	if !utf8.ValidString(s) {
		return ""
	}
	if len(s) > maxBodyInMessage {
		cut := maxBodyInMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// retryAfter returns the delay a response asks for: retry-after-ms (a
// number of milliseconds) first, then Retry-After as seconds or an HTTP
// date. It returns 0 when neither is present or valid.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs > 0 && secs < 1e9 {
			return time.Duration(secs * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// connectError wraps a failure to get a response at all. Certificate
// problems and unknown hosts are not retried; everything else (refused,
// reset, timeouts, a dropped connection) is.
func connectError(provider string, err error) error {
	return &llm.Error{
		Provider:  provider,
		Kind:      "connect",
		Message:   err.Error(),
		Retryable: retryableConnect(err),
		Err:       err,
	}
}

// retryableConnect classifies a client.Do error.
func retryableConnect(err error) bool {
	var (
		verr  *tls.CertificateVerificationError
		uaerr x509.UnknownAuthorityError
		hnerr x509.HostnameError
		cierr x509.CertificateInvalidError
		rherr tls.RecordHeaderError
		dnerr *net.DNSError
	)
	switch {
	case errors.As(err, &verr), errors.As(err, &uaerr), errors.As(err, &hnerr),
		errors.As(err, &cierr), errors.As(err, &rherr):
		return false
	case errors.As(err, &dnerr):
		return !dnerr.IsNotFound
	}
	return true
}

package httpcall

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxListBody bounds the body GetJSON reads: a models list is a few
// hundred kilobytes at most.
const maxListBody = 16 << 20

// GetJSON sends a GET to url with header and decodes the 2xx JSON answer
// into v, retrying as Post does (statuses and connect errors the vendors'
// SDKs retry, with backoff). Another status is an *llm.Error whose kind
// and message decodeErr reads from the body (nil: the body's text).
func GetJSON(ctx context.Context, provider, url string, header http.Header, opt Options,
	decodeErr func(status int, body []byte) (kind, message string), v any) error {
	if err := checkURL(url); err != nil {
		return fmt.Errorf("%s: %w", provider, err)
	}
	opt = opt.withDefaults()
	return Retry(ctx, opt, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("%s: building request: %w", provider, err)
		}
		req.Header = header.Clone()
		if req.Header == nil {
			req.Header = make(http.Header)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := opt.HTTPClient.Do(req)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("%s: sending request: %w", provider, cerr)
			}
			return connectError(provider, err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return statusError(provider, resp, decodeErr, time.Now())
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxListBody+1))
		if err != nil {
			return fmt.Errorf("%s: reading %s: %w", provider, url, err)
		}
		if len(body) > maxListBody {
			return fmt.Errorf("%s: %s answered more than %d MiB, more than any models list", provider, url, maxListBody>>20)
		}
		if err := json.Unmarshal(body, v); err != nil {
			return fmt.Errorf("%s: decoding %s: %w", provider, url, err)
		}
		return nil
	})
}

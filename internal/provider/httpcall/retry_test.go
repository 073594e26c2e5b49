package httpcall

import (
	"context"
	"errors"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

func TestRetry(t *testing.T) {
	retryable := &llm.Error{Provider: "test", Kind: "overloaded_error", Retryable: true}
	fatal := &llm.Error{Provider: "test", Kind: "invalid_request_error"}
	plain := errors.New("boom")
	tests := []struct {
		name      string
		errs      []error // returned by successive attempts; nil ends
		max       int
		wantCalls int
		wantErr   error
	}{
		{"success first", []error{nil}, 4, 1, nil},
		{"retry then success", []error{retryable, retryable, nil}, 4, 3, nil},
		{"not retryable", []error{fatal, nil}, 4, 1, fatal},
		{"plain error not retried", []error{plain, nil}, 4, 1, plain},
		{"bounded", []error{retryable, retryable, retryable, nil}, 2, 2, retryable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &sleepRecorder{}
			calls := 0
			err := Retry(context.Background(), Options{MaxAttempts: tt.max, Sleep: rec.sleep}, func(ctx context.Context) error {
				calls++
				return tt.errs[calls-1]
			})
			if calls != tt.wantCalls {
				t.Fatalf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if err != tt.wantErr {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(rec.got()) != calls-1 {
				t.Fatalf("sleeps = %d, want %d", len(rec.got()), calls-1)
			}
		})
	}
}

func TestRetryUsesRetryAfter(t *testing.T) {
	rec := &sleepRecorder{}
	calls := 0
	err := Retry(context.Background(), Options{Sleep: rec.sleep}, func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return &llm.Error{Retryable: true, RetryAfter: 3 * time.Second}
		}
		return nil
	})
	if err != nil || len(rec.got()) != 1 || rec.got()[0] != 3*time.Second {
		t.Fatalf("err = %v, delays = %v", err, rec.got())
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Retry(ctx, Options{Sleep: func(context.Context, time.Duration) error { return nil }}, func(ctx context.Context) error {
		calls++
		cancel()
		return &llm.Error{Retryable: true}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
	if err := Retry(ctx, Options{}, func(context.Context) error { t.Fatal("attempt after cancel"); return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestBackoffBounds(t *testing.T) {
	o := Options{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	for n := 1; n <= 100; n++ {
		ceil := time.Second
		if n <= 4 {
			ceil = 100 * time.Millisecond << (n - 1)
		}
		for range 50 {
			if d := o.backoff(n); d < 0 || d > ceil {
				t.Fatalf("backoff(%d) = %v, want within [0, %v]", n, d, ceil)
			}
		}
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	h := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = []string{kv[i+1]}
		}
		return m
	}
	tests := []struct {
		name string
		h    map[string][]string
		want time.Duration
	}{
		{"none", h(), 0},
		{"seconds", h("Retry-After", "30"), 30 * time.Second},
		{"fractional seconds", h("Retry-After", "1.5"), 1500 * time.Millisecond},
		{"date", h("Retry-After", now.Add(42*time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT")), 42 * time.Second},
		{"date in the past", h("Retry-After", now.Add(-time.Minute).Format("Mon, 02 Jan 2006 15:04:05 GMT")), 0},
		{"garbage", h("Retry-After", "soon"), 0},
		{"negative", h("Retry-After", "-3"), 0},
		{"ms", h("Retry-After-Ms", "20"), 20 * time.Millisecond},
		{"bad ms falls back", h("Retry-After-Ms", "x", "Retry-After", "2"), 2 * time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("%s: retryAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
}

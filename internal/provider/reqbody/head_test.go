package reqbody

import (
	"errors"
	"testing"
)

func TestHeadCacheEncodesOnlyWhatChanged(t *testing.T) {
	var c HeadCache[string]
	calls := 0
	get := func(key, system string) string {
		t.Helper()
		head, err := c.Get(key, system, func() ([]byte, error) {
			calls++
			return []byte(key + "|" + system), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(head)
	}
	steps := []struct {
		key, system string
		calls       int
	}{
		{"m1", "be brief", 1},
		{"m1", "be brief", 1},
		{"m2", "be brief", 2},
		{"m2", "be thorough", 3},
		{"m2", "be thorough", 3},
		{"m1", "be brief", 4},
	}
	for i, s := range steps {
		if got, want := get(s.key, s.system), s.key+"|"+s.system; got != want {
			t.Fatalf("step %d: head %q, want %q", i, got, want)
		}
		if calls != s.calls {
			t.Fatalf("step %d: %d encodings, want %d", i, calls, s.calls)
		}
	}

	// A failed encoding is returned and not kept.
	boom := errors.New("boom")
	if _, err := c.Get("m3", "", func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	if got := get("m1", "be brief"); got != "m1|be brief" || calls != 4 {
		t.Fatalf("after a failure: head %q after %d encodings, want the cached one after 4", got, calls)
	}

	var none *HeadCache[string]
	for range 2 {
		if _, err := none.Get("m1", "x", func() ([]byte, error) { calls++; return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 6 {
		t.Fatalf("a nil cache encoded %d times in 2 calls", calls-4)
	}
}

package durable

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestRelayOnceInOrder: an activity's events reach the relay's watcher
// in order; an attempt that repeats the activity (the same numbers)
// passes on only what the first did not; a turn nobody watches is
// ignored.
func TestRelayOnceInOrder(t *testing.T) {
	r := NewRelay()
	srv := httptest.NewServer(r)
	defer srv.Close()
	var mu sync.Mutex
	var got []string
	stop := r.Watch("t1", func(ev json.RawMessage) {
		mu.Lock()
		got = append(got, string(ev))
		mu.Unlock()
	})
	defer stop()
	delta := func(s string) wire.Event { return &wire.TextDeltaEvent{Delta: s} }

	first := newEmitter(srv.Client(), srv.URL, "t1", 1<<seqShift)
	first.emit(delta("a"))
	first.emit(delta("b"))
	first.close()
	again := newEmitter(srv.Client(), srv.URL, "t1", 1<<seqShift)
	for _, s := range []string{"a", "b", "c", "d"} {
		again.emit(delta(s))
	}
	again.close()
	next := newEmitter(srv.Client(), srv.URL, "t1", 2<<seqShift)
	next.emit(delta("e"))
	next.close()
	other := newEmitter(srv.Client(), srv.URL, "t2", 1<<seqShift)
	other.emit(delta("x"))
	other.close()

	var text strings.Builder
	for _, line := range got {
		ev, err := wire.DecodeEvent([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		text.WriteString(ev.(*wire.TextDeltaEvent).Delta)
	}
	if text.String() != "abcde" {
		t.Errorf("the watcher got %q, want abcde", text.String())
	}
}

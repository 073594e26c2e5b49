package durable

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestRelayOnceInOrder: an activity's events reach the relay's watcher
// in order; an attempt that repeats the activity's events (attempt 0:
// the same numbers) passes on only what the first did not; a turn
// nobody watches is ignored.
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
	}, nil)
	defer stop()
	delta := func(s string) wire.Event { return &wire.TextDeltaEvent{Delta: s} }

	first := newEmitter(srv.Client(), srv.URL, "t1", 1<<seqShift, 0)
	first.emit(delta("a"))
	first.emit(delta("b"))
	first.close()
	again := newEmitter(srv.Client(), srv.URL, "t1", 1<<seqShift, 0)
	for _, s := range []string{"a", "b", "c", "d"} {
		again.emit(delta(s))
	}
	again.close()
	next := newEmitter(srv.Client(), srv.URL, "t1", 2<<seqShift, 0)
	next.emit(delta("e"))
	next.close()
	other := newEmitter(srv.Client(), srv.URL, "t2", 1<<seqShift, 0)
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

// TestRelayEnd: the end a turn's last step posts after its events
// reaches the watcher after them, once however often the step's attempts
// post it; an end posted under the turn's id by another workflow (a
// sub-agent's child workflow) is not the turn's.
func TestRelayEnd(t *testing.T) {
	r := NewRelay()
	srv := httptest.NewServer(r)
	defer srv.Close()
	var mu sync.Mutex
	var got []string
	stop := r.Watch("t1", func(ev json.RawMessage) {
		mu.Lock()
		got = append(got, "event")
		mu.Unlock()
	}, func(out TurnOutput) {
		mu.Lock()
		got = append(got, "end "+out.Transcript)
		mu.Unlock()
	})
	defer stop()
	child := newEmitter(srv.Client(), srv.URL, "t1", 1<<seqShift, 0)
	child.close()
	child.end(TurnOutput{Transcript: "sha256:child"}, "t1-child")
	for range 2 { // an attempt after one whose report was lost
		last := newEmitter(srv.Client(), srv.URL, "t1", 2<<seqShift, 0)
		last.emit(&wire.TextDeltaEvent{Delta: "a"})
		last.emit(&wire.TurnEndEvent{Stop: wire.StopEndTurn})
		last.close()
		last.end(TurnOutput{Transcript: "sha256:t1"}, "t1")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"event", "event", "end sha256:t1"}; !slices.Equal(got, want) {
		t.Errorf("the watcher got %q, want %q", got, want)
	}
}

// relayRun is a relay on loopback watching turn "t", and what it passed.
type relayRun struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func newRelayRun(t *testing.T) *relayRun {
	r := NewRelay()
	rr := &relayRun{t: t, srv: httptest.NewServer(r)}
	t.Cleanup(rr.srv.Close)
	stop := r.Watch("t", func(ev json.RawMessage) {
		rr.mu.Lock()
		rr.got = append(rr.got, string(ev))
		rr.mu.Unlock()
	}, nil)
	t.Cleanup(stop)
	return rr
}

// post sends one line as an emitter would: event ev, numbered n within
// activity act, of attempt.
func (rr *relayRun) post(act, n int64, attempt int32, ev wire.Event) {
	rr.t.Helper()
	line := fmt.Sprintf(`{"turn":"t","seq":%d,"attempt":%d,"event":%s}`+"\n", act<<seqShift+n, attempt, ev.AppendJSON(nil))
	resp, err := rr.srv.Client().Post(rr.srv.URL, "application/x-ndjson", strings.NewReader(line))
	if err != nil {
		rr.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		rr.t.Fatalf("the relay answered %s", resp.Status)
	}
}

func (rr *relayRun) passed() []string {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Clone(rr.got)
}

func progress(id, text string) wire.Event { return &wire.ToolProgressEvent{ID: id, Text: text} }

// TestRelayActivitiesAtOnce: two tool calls that run side by side post
// their events interleaved; each activity's events pass as they come, in
// its own order, none dropped for the other's numbers being higher, and
// a repeated event of either is still dropped.
func TestRelayActivitiesAtOnce(t *testing.T) {
	rr := newRelayRun(t)
	rr.post(3, 0, 1, progress("b", "b0"))
	rr.post(2, 0, 1, progress("a", "a0"))
	rr.post(2, 1, 1, progress("a", "a1"))
	rr.post(3, 1, 1, progress("b", "b1"))
	rr.post(2, 1, 1, progress("a", "a1")) // repeated
	rr.post(2, 2, 1, &wire.ToolResultEvent{ID: "a"})
	rr.post(3, 0, 1, progress("b", "b0")) // repeated
	var got []string
	for _, line := range rr.passed() {
		ev, err := wire.DecodeEvent([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		switch e := ev.(type) {
		case *wire.ToolProgressEvent:
			got = append(got, e.Text)
		case *wire.ToolResultEvent:
			got = append(got, "result "+e.ID)
		}
	}
	if want := []string{"b0", "a0", "a1", "b1", "result a"}; !slices.Equal(got, want) {
		t.Errorf("the watcher got %q, want %q", got, want)
	}
}

// TestRelayNewAttempt: a model call made again after its first attempt
// showed part of an answer passes from its start, its turn_start
// carrying the attempt; a late event of the first attempt is dropped; an
// attempt after one that showed nothing passes as a first one would; a
// tool call's second attempt (its interrupted result) passes though its
// numbers were used by the first's progress.
func TestRelayNewAttempt(t *testing.T) {
	rr := newRelayRun(t)
	delta := func(s string) wire.Event { return &wire.TextDeltaEvent{Delta: s} }
	// Activity 1: a model call cut after "Hel", made again.
	rr.post(1, 0, 1, &wire.TurnStartEvent{Step: 1})
	rr.post(1, 1, 1, &wire.AssistantStartEvent{})
	rr.post(1, 2, 1, delta("Hel"))
	rr.post(1, 0, 2, &wire.TurnStartEvent{Step: 1})
	rr.post(1, 1, 2, &wire.AssistantStartEvent{})
	rr.post(1, 2, 2, delta("Hi"))
	rr.post(1, 3, 1, delta("lo")) // late, of the cut attempt
	rr.post(1, 3, 2, delta(" there"))
	rr.post(1, 2, 2, delta("Hi")) // repeated
	// Activity 2: a tool call whose worker went away after its progress.
	rr.post(2, 0, 1, progress("c", "started"))
	rr.post(2, 0, 2, &wire.ToolResultEvent{ID: "c", IsError: true})
	// Activity 3: a model call whose first attempt showed nothing.
	rr.post(3, 0, 2, &wire.TurnStartEvent{Step: 2})
	want := []string{
		`{"type":"turn_start","seq":0,"step":1}`,
		`{"type":"assistant_start","seq":0}`,
		`{"type":"text_delta","seq":0,"delta":"Hel"}`,
		`{"type":"turn_start","seq":0,"step":1,"attempt":2}`,
		`{"type":"assistant_start","seq":0}`,
		`{"type":"text_delta","seq":0,"delta":"Hi"}`,
		`{"type":"text_delta","seq":0,"delta":" there"}`,
		`{"type":"tool_progress","seq":0,"id":"c","text":"started"}`,
		`{"type":"tool_result","seq":0,"id":"c","is_error":true,"content":[]}`,
		`{"type":"turn_start","seq":0,"step":2}`,
	}
	if got := rr.passed(); !slices.Equal(got, want) {
		t.Errorf("the watcher got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package rpcclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk/wire"
)

// testClient is a Client on the scripted provider in a fresh directory.
type testClient struct {
	*Client
	stderr *zotbin.Buffer
}

// startZot starts `zot rpc --provider scripted` with extra flags and
// environment entries. The test fails if stdout carries a line that is not
// a JSON object; the client is closed when the test ends.
func startZot(t *testing.T, env []string, args ...string) *testClient {
	t.Helper()
	stderr := &zotbin.Buffer{}
	c, err := Start(context.Background(), Options{
		Bin:    zotBin,
		Args:   append([]string{"--provider", "scripted", "--cwd", t.TempDir()}, args...),
		Env:    append(cleanEnv(), env...),
		Stderr: stderr,
		OnBadLine: func(line []byte, err error) {
			t.Errorf("stdout line is not a JSON object (%v): %q", err, line)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &testClient{Client: c, stderr: stderr}
}

// ctx is a context that ends at the hang guard.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return c
}

// collect reads a stream to its done and checks that every event belongs
// to it, seq increases and exactly one done ends it.
func collect(t *testing.T, s *Stream) []wire.Event {
	t.Helper()
	evs, err := s.Collect(ctx(t))
	if err != nil {
		t.Fatalf("%s stream: %v after %v", s.Command, err, types(evs))
	}
	if len(evs) == 0 || evs[len(evs)-1].Type() != wire.TypeDoneEvent {
		t.Fatalf("%s stream does not end with done: %v", s.Command, types(evs))
	}
	var seq int64
	for i, ev := range evs {
		if ev.GetPromptID() != s.ID {
			t.Errorf("event %d (%s) has prompt_id %s, want %s", i, ev.Type(), ev.GetPromptID(), s.ID)
		}
		if ev.GetSeq() <= seq {
			t.Errorf("event %d (%s) has seq %d after %d", i, ev.Type(), ev.GetSeq(), seq)
		}
		seq = ev.GetSeq()
		if ev.Type() == wire.TypeDoneEvent && i != len(evs)-1 {
			t.Errorf("done before the end: %v", types(evs))
		}
	}
	return evs
}

// types lists the events' types.
func types(evs []wire.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type()
	}
	return out
}

// text concatenates the events' text deltas.
func text(evs []wire.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if d, ok := e.(*wire.TextDeltaEvent); ok {
			b.WriteString(d.Delta)
		}
	}
	return b.String()
}

// find returns the first event of type T.
func find[T wire.Event](evs []wire.Event) (T, bool) {
	for _, e := range evs {
		if v, ok := e.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// wantCode checks that err is an *Error with the code and command.
func wantCode(t *testing.T, err error, code wire.ErrorCode, command string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *Error with code %s", err, err, code)
	}
	if e.Code != code || e.Command != command || e.Message == "" {
		t.Fatalf("error %+v, want code %s for %s with a message", e, code, command)
	}
}

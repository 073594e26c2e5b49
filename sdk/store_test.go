package sdk

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/wire"
)

// A Config that names a session store keeps the session there, under an
// id the store lists and a later Runtime resumes; without one nothing is
// stored.
func TestConfigSessionStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	rt := newScripted(t, "", Config{SessionStore: dir})
	if rt.SessionID() == "" || !store.ValidID(rt.SessionID()) {
		t.Fatalf("SessionID %q", rt.SessionID())
	}
	drain(t, must(rt.Prompt(context.Background(), "remember this", nil)))
	n := must(rt.State(context.Background())).MessageCount
	rt.Close()

	st, err := store.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.List(context.Background(), store.Filter{})
	if err != nil || len(list) != 1 || list[0].ID != rt.SessionID() || list[0].Title != "remember this" || int64(list[0].Messages) != n {
		t.Fatalf("the store lists %+v (%v), want %s with %d messages", list, err, rt.SessionID(), n)
	}
	resumed := newScripted(t, "", Config{SessionStore: dir, SessionID: rt.SessionID()})
	if got := must(resumed.State(context.Background())).MessageCount; got != n || resumed.SessionID() != rt.SessionID() {
		t.Errorf("resumed %s with %d messages, want %d", resumed.SessionID(), got, n)
	}

	if plain := newScripted(t, "", Config{}); plain.SessionID() != "" {
		t.Errorf("a Runtime without a store has id %q", plain.SessionID())
	}
	for _, cfg := range []Config{
		{Provider: "scripted", SessionStore: dir, SessionFile: filepath.Join(dir, "x.jsonl")},
		{Provider: "scripted", SessionID: rt.SessionID()},
		{Provider: "scripted", SessionStore: dir, SessionID: "../escape"},
	} {
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "Session") {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}
}

// The session methods: without a store they are refused
// (invalid_params); with one, the Runtime's own session is listed,
// forked before its last prompt (the fork loaded), and loaded back.
func TestRuntimeSessionMethods(t *testing.T) {
	ctx := context.Background()
	if _, err := newScripted(t, "", Config{}).ListSessions(ctx, ""); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Errorf("ListSessions without a store: %v", err)
	}
	rt := newScripted(t, "", Config{SessionStore: filepath.Join(t.TempDir(), "sessions")})
	drain(t, must(rt.Prompt(ctx, "one", nil)))
	drain(t, must(rt.Prompt(ctx, "two", nil)))
	n := must(rt.State(ctx)).MessageCount
	list, err := rt.ListSessions(ctx, "")
	if err != nil || len(list) != 1 || list[0].ID != rt.SessionID() || list[0].Current == nil {
		t.Fatalf("ListSessions: %+v %v", list, err)
	}
	parent := rt.SessionID()
	f, err := rt.ForkSession(ctx, wire.ForkSessionCommand{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Loaded || f.Session.ParentID != parent || rt.SessionID() != f.Session.ID || f.Session.MessageCount != f.AtIndex || f.AtIndex != 4 {
		t.Errorf("ForkSession: %+v, Runtime's id %s", f, rt.SessionID())
	}
	if tb, ok := f.Message.Content[0].(*wire.TextBlock); !ok || tb.Text != "two" {
		t.Errorf("the prompt left out: %+v", f.Message)
	}
	if got := must(rt.State(ctx)).MessageCount; got != f.AtIndex {
		t.Errorf("after the fork: %d messages, want %d", got, f.AtIndex)
	}
	if _, err := rt.LoadSession(ctx, parent); err != nil || rt.SessionID() != parent || must(rt.State(ctx)).MessageCount != n {
		t.Errorf("LoadSession: %v, id %s", err, rt.SessionID())
	}
	if _, err := rt.LoadSession(ctx, "20200101T000000Z-0000000000000000"); wire.CodeOf(err) != wire.CodeNotFound {
		t.Errorf("LoadSession of none: %v", err)
	}
}

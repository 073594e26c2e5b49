package sdk

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/store"
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

package session

import (
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"zot.dev/zot/internal/llm"
)

// A saved message is in the file as soon as Save returns, before any
// sync: what a process killed at that moment leaves behind.
func TestSavedMessagesAreInTheFileBeforeAnySync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	for i := 1; i <= len(all); i++ {
		if err := f.Save(all[:i]); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(splitLines(data)); n != 1+i {
			t.Fatalf("after saving %d messages the file holds %d lines, want a header and %[1]d", i, n)
		}
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("file holds %d messages, want %d", len(got), len(all))
	}
}

// Saves go on while background syncs run; Close waits for them, syncs
// what is left and loses nothing.
func TestSyncLaterBesideSaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	if err := f.Sync(); err != nil { // nothing written: nothing to do
		t.Fatal(err)
	}
	var msgs []llm.Message
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			f.SyncLater()
		}
	}()
	for i := range 50 {
		msgs = append(msgs, another("message "+string(rune('a'+i%26))))
		if err := f.Save(msgs); err != nil {
			t.Fatal(err)
		}
		f.SyncLater()
	}
	wg.Wait()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// A rewrite (a compaction) is synced before Save returns.
	if err := f.Save(msgs[10:]); err != nil {
		t.Fatal(err)
	}
	f.SyncLater()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f.SyncLater() // after Close: nothing happens
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, msgs[10:]) {
		t.Fatalf("file holds %d messages, want %d", len(got), len(msgs)-10)
	}
}

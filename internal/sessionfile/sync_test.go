package sessionfile

import (
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

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

// SyncLater syncs at once after a quiet spell; calls within SyncGap of
// that sync wait out the gap and share one sync; Close cuts the wait
// short and syncs.
func TestSyncLaterSharesASyncWithinTheGap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	type waited struct {
		d       time.Duration
		hurried bool
	}
	waits := make(chan waited)
	release := make(chan struct{})
	f.wait = func(d time.Duration, hurry <-chan struct{}) {
		select {
		case <-release:
			waits <- waited{d: d}
		case <-hurry:
			waits <- waited{d: d, hurried: true}
		}
	}
	dirty := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.dirty
	}
	syncDone := func() chan struct{} {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.syncDone
	}
	msgs := []llm.Message{another("one")}
	if err := f.Save(msgs); err != nil {
		t.Fatal(err)
	}
	// Never synced before: synced at once, without a wait (a wait
	// would block on release and the goroutine would never end).
	f.SyncLater()
	<-syncDone()
	if dirty() {
		t.Fatal("the first SyncLater did not sync")
	}
	// Within the gap: the goroutine waits, and every call meanwhile
	// shares the sync that follows.
	msgs = append(msgs, another("two"))
	if err := f.Save(msgs); err != nil {
		t.Fatal(err)
	}
	f.SyncLater()
	for i := range 20 {
		msgs = append(msgs, another("more "+string(rune('a'+i))))
		if err := f.Save(msgs); err != nil {
			t.Fatal(err)
		}
		f.SyncLater()
	}
	if !dirty() {
		t.Fatal("synced before the gap had passed")
	}
	done := syncDone()
	release <- struct{}{}
	if w := <-waits; w.hurried || w.d <= 0 || w.d > SyncGap {
		t.Fatalf("waited %v (hurried %v), want a wait in (0, %v]", w.d, w.hurried, SyncGap)
	}
	<-done // one wait, one sync: the calls during the wait asked for no other
	if dirty() {
		t.Fatal("the sync after the gap left lines unsynced")
	}
	// Close during a wait syncs at once.
	msgs = append(msgs, another("last"))
	if err := f.Save(msgs); err != nil {
		t.Fatal(err)
	}
	f.SyncLater()
	closed := make(chan error, 1)
	go func() { closed <- f.Close() }()
	if w := <-waits; !w.hurried {
		t.Fatal("Close did not cut the wait short")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, msgs) {
		t.Fatalf("file holds %d messages, want %d", len(got), len(msgs))
	}
}

// SaveVersion appends while the version stays the same, without walking
// what was saved, and rewrites the file when the version changes and the
// transcript no longer extends the file's.
func TestSaveVersionRewritesOnlyOnANewVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	for i := 1; i <= len(all); i++ {
		if err := f.SaveVersion(all[:i], 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("after appends the file holds %d messages, want %d", len(got), len(all))
	}
	// A compaction: a new version, a shorter transcript.
	compacted := append([]llm.Message{another("summary")}, all[3:]...)
	if err := f.SaveVersion(compacted, 2); err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, compacted) {
		t.Fatalf("after the new version the file holds %d messages, want %d", len(got), len(compacted))
	}
	// Appends of the new version, then a Save without a version, which
	// checks the whole transcript again.
	compacted = append(compacted, another("next"))
	if err := f.SaveVersion(compacted, 2); err != nil {
		t.Fatal(err)
	}
	cleared := []llm.Message{another("fresh")}
	if err := f.Save(cleared); err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, cleared) {
		t.Fatalf("after Save the file holds %d messages, want %d", len(got), len(cleared))
	}
	// After a Save without a version, the same version number is no
	// promise: a changed transcript is still caught.
	if err := f.SaveVersion([]llm.Message{another("other")}, 2); err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, path); len(got) != 1 || got[0].Content[0].(*llm.TextBlock).Text != "other" {
		t.Fatalf("file holds %+v, want the one message saved last", got)
	}
}

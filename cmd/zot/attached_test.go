package main

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestAttachedSessionsTwoWriters: two keepers of one attached.json (as
// two zot attach processes have: each its own, with nothing shared but
// the file) keeping sessions at once lose none of each other's.
func TestAttachedSessionsTwoWriters(t *testing.T) {
	file := filepath.Join(t.TempDir(), "attached.json")
	a, b := &attachedSessions{file: file}, &attachedSessions{file: file}
	const n = 60
	var wg sync.WaitGroup
	for w, k := range []*attachedSessions{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				if err := k.Keep(fmt.Sprintf("s%d-%d", w, i), "m", "ask"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := len(a.read()); got != 2*n {
		t.Errorf("attached.json keeps %d sessions, want %d", got, 2*n)
	}
}

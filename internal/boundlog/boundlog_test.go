package boundlog

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestLimiterLetsMaxThroughAndTellsTheRest(t *testing.T) {
	var (
		mu   sync.Mutex
		told []int
	)
	l := NewLimiter(3, 50*time.Millisecond, func(n int, _ time.Duration) {
		mu.Lock()
		told = append(told, n)
		mu.Unlock()
	})
	passed := 0
	for range 100 {
		if l.Allow() {
			passed++
		}
	}
	if passed != 3 {
		t.Fatalf("%d lines passed, want 3", passed)
	}
	// The count is told when the window is over, with no line after it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(told)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the drops were never told")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !l.Allow() {
		t.Fatal("a line in a fresh window was dropped")
	}
	for range 10 {
		l.Allow()
	}
	l.Close()
	if l.Allow() {
		t.Fatal("a line passed after Close")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 2 || told[0] != 97 || told[1] != 8 {
		t.Fatalf("told %v, want [97 8]", told)
	}
}

func TestFileRotatesAtItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	f, err := OpenFile(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.Repeat([]byte("a"), 99)
	line = append(line, '\n')
	for range 1000 {
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Write(bytes.Repeat([]byte("b"), 5000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1000 {
			t.Errorf("%s is %d bytes, over the cap of 1000", p, st.Size())
		}
	}
	if _, err := f.Write(line); err == nil {
		t.Error("a write after Close succeeded")
	}
}

func TestBucketPacesToItsRate(t *testing.T) {
	b := NewBucket(1000, 10)
	for range 110 {
		b.Take(1)
	}
	// 100 tokens over the burst at 1000 a second: about 100 ms of debt.
	if d := b.Take(0); d < 50*time.Millisecond || d > 200*time.Millisecond {
		t.Fatalf("debt of %v after 110 tokens at 1000/s with a burst of 10", d)
	}
}

// Files that share a path (one extension in several sessions) keep it
// within its cap together.
func TestFilesSharingAPathKeepItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	var files []*File
	for range 4 {
		f, err := OpenFile(path, 1000)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	line := append(bytes.Repeat([]byte("a"), 49), '\n')
	for i := range 2000 {
		if _, err := files[i%len(files)].Write(line); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		f.Close()
	}
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1000 {
			t.Errorf("%s is %d bytes, over the cap of 1000", p, st.Size())
		}
	}
}

package engine

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseAllRunsSideBySide: CloseAll closes items at once (each close
// here returns only when five have begun, which one after another would
// never reach), at most closeParallel at a time, and returns the first
// error in the order of the items.
func TestCloseAllRunsSideBySide(t *testing.T) {
	const n = 5
	var begun sync.WaitGroup
	begun.Add(n)
	all := make(chan struct{})
	go func() { begun.Wait(); close(all) }()
	errA, errB := errors.New("a"), errors.New("b")
	done := make(chan error, 1)
	go func() {
		done <- CloseAll([]int{0, 1, 2, 3, 4}, func(i int) error {
			begun.Done()
			<-all
			switch i {
			case 1:
				return errA
			case 3:
				return errB
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != errA {
			t.Fatalf("CloseAll returned %v, want the first item's error %v", err, errA)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing goal
		t.Fatal("CloseAll closed one item after another")
	}

	var now, most atomic.Int32
	items := make([]int, 3*closeParallel)
	if err := CloseAll(items, func(int) error {
		c := now.Add(1)
		for {
			m := most.Load()
			if c <= m || most.CompareAndSwap(m, c) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		now.Add(-1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > closeParallel {
		t.Errorf("%d closes at once, more than %d", m, closeParallel)
	}
}

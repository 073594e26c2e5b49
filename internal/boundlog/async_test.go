package boundlog

import (
	"io"
	"strings"
	"testing"
	"time"
)

// A write to an Async never waits for its writer, even one that is stuck;
// what does not fit is dropped and counted; Close writes what waits.
func TestAsyncNeverWaits(t *testing.T) {
	pr, pw := io.Pipe() // nobody reads yet: every write to pw blocks
	a := NewAsync(pw, 64)
	start := time.Now()
	for range 100 {
		if _, err := a.Write([]byte("a line of log\n")); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("writes waited %v for a stuck writer", took)
	}
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- string(b)
	}()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	out := <-got
	if !strings.HasPrefix(out, "a line of log\n") || !strings.Contains(out, "log lines dropped") {
		t.Fatalf("log:\n%s", out)
	}
	if n := strings.Count(out, "a line of log\n"); n < 1 || n > 64/14+1 {
		t.Fatalf("%d lines written past a bound of 64 bytes", n)
	}
}

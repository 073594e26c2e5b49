package tools

import (
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSplitUTF8(t *testing.T) {
	euro := "€" // e2 82 ac
	cases := []struct {
		in, complete, rest string
	}{
		{"", "", ""},
		{"abc", "abc", ""},
		{"ab" + euro, "ab" + euro, ""},
		{"ab" + euro[:1], "ab", euro[:1]},
		{"ab" + euro[:2], "ab", euro[:2]},
		{"😀"[:3], "", "😀"[:3]},
		{"x" + "😀"[:1], "x", "😀"[:1]},
		{"bad\xff", "bad\xff", ""},                         // invalid, not carried
		{"bad\x82\x82\x82\x82", "bad\x82\x82\x82\x82", ""}, // stray continuations
		{"\xe2\x41", "\xe2\x41", ""},                       // broken sequence is complete (invalid)
	}
	for _, c := range cases {
		complete, rest := splitUTF8([]byte(c.in))
		if string(complete) != c.complete || string(rest) != c.rest {
			t.Errorf("splitUTF8(%q) = %q, %q; want %q, %q", c.in, complete, rest, c.complete, c.rest)
		}
	}
}

func TestProgressPumpKeepsSequencesWholeAndThrottles(t *testing.T) {
	var mu sync.Mutex
	var chunks []string
	var times []time.Time
	pump := newProgressPump(func(s string) {
		mu.Lock()
		defer mu.Unlock()
		chunks = append(chunks, s)
		times = append(times, time.Now())
	})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump.run(stop)
	}()
	// Write "héllo wörld 😀" byte by byte, slowly enough to span flushes.
	text := strings.Repeat("héllo wörld 😀 ", 20)
	for i := 0; i < len(text); i++ {
		pump.write([]byte{text[i]})
		if i%40 == 0 {
			time.Sleep(30 * time.Millisecond)
		}
	}
	close(stop)
	<-done
	pump.flush(true)

	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(chunks, ""); got != text {
		t.Errorf("joined chunks differ:\n%q\n%q", got, text)
	}
	for _, c := range chunks {
		if !utf8.ValidString(c) {
			t.Errorf("chunk is not valid UTF-8: %q", c)
		}
	}
	// Calls from the pump's loop (all but the final flush) are at least
	// progressInterval apart.
	for i := 1; i < len(times)-1; i++ {
		if gap := times[i].Sub(times[i-1]); gap < progressInterval {
			t.Errorf("progress calls %d and %d only %v apart", i-1, i, gap)
		}
	}
}

func TestProgressPumpReplacesInvalidAndBoundsPending(t *testing.T) {
	var got []string
	pump := newProgressPump(func(s string) { got = append(got, s) })
	pump.write([]byte("ok\xff"))
	pump.flush(false)
	if len(got) != 1 || got[0] != "ok\uFFFD" {
		t.Errorf("got %q", got)
	}
	got = nil
	pump.write(make([]byte, progressMaxPending+10))
	pump.flush(false)
	if len(got) != 1 || !strings.Contains(got[0], "10 bytes of output not shown live") {
		t.Errorf("overflow marker missing")
	}
}

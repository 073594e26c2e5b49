package tools

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress reporting of running commands.
const (
	// progressInterval is the minimum time between two progress calls.
	progressInterval = 100 * time.Millisecond
	// progressMaxPending bounds the output held for the next progress call;
	// output beyond it is left out of the live view (it still reaches the
	// result).
	progressMaxPending = 256 << 10
)

// splitUTF8 splits b into a prefix that does not end inside a UTF-8
// sequence and the incomplete sequence at its end (at most 3 bytes), which
// should be carried over to the next chunk. Invalid bytes are not carried.
func splitUTF8(b []byte) (complete, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], b[i:]
			}
			return b, nil
		}
	}
	return b, nil
}

// progressPump coalesces output and hands it to a callback at most once per
// progressInterval, in valid UTF-8 chunks. Writes may come from any
// goroutine; the callback is only called from run and from the final flush,
// which its owner calls after run returns.
type progressPump struct {
	emit func(string)

	mu      sync.Mutex
	pending []byte
	dropped int
}

func newProgressPump(emit func(string)) *progressPump {
	return &progressPump{emit: emit}
}

// write queues output.
func (p *progressPump) write(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	room := progressMaxPending - len(p.pending)
	if room < len(b) {
		p.dropped += len(b) - max(room, 0)
		b = b[:max(room, 0)]
	}
	p.pending = append(p.pending, b...)
}

// run flushes queued output until stop is closed, waiting
// progressInterval after each flush, so calls are at least that far apart.
func (p *progressPump) run(stop <-chan struct{}) {
	timer := time.NewTimer(progressInterval)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-timer.C:
			p.flush(false)
			timer.Reset(progressInterval)
		}
	}
}

// flush hands queued output to the callback. Unless final, an incomplete
// UTF-8 sequence at the end is kept for the next flush.
func (p *progressPump) flush(final bool) {
	p.mu.Lock()
	chunk, rest := p.pending, []byte(nil)
	dropped := p.dropped
	if !final && dropped == 0 {
		chunk, rest = splitUTF8(chunk)
	}
	text := strings.ToValidUTF8(string(chunk), "\uFFFD")
	p.pending = append(p.pending[:0:0], rest...)
	p.dropped = 0
	p.mu.Unlock()
	if dropped > 0 {
		text += fmt.Sprintf("\n[... %d bytes of output not shown live ...]\n", dropped)
	}
	if text != "" {
		p.emit(text)
	}
}

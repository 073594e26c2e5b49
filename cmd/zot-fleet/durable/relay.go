package durable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"zot.dev/zot/sdk/wire"
)

// Events leave an activity out of band: an emitter posts them, in
// batches of what accumulated while the last batch was in flight, as
// JSON Lines ({"turn","seq","event"}) to the relay of the client that
// submitted the turn. Each activity numbers its events from the number
// the workflow gave it, so an attempt that repeats a failed one repeats
// its numbers and the relay drops what it already passed on.

// emitter posts one activity's events.
type emitter struct {
	url, turn string
	client    *http.Client
	next      int64

	mu     sync.Mutex
	wake   chan struct{}
	buf    []byte
	closed bool
	done   chan struct{}
}

func newEmitter(client *http.Client, url, turn string, base int64) *emitter {
	e := &emitter{url: url, turn: turn, client: client, next: base, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go e.run()
	return e
}

// emit queues ev.
func (e *emitter) emit(ev wire.Event) {
	e.mu.Lock()
	e.buf = append(e.buf, `{"turn":`...)
	e.buf = strconv.AppendQuote(e.buf, e.turn)
	e.buf = append(e.buf, `,"seq":`...)
	e.buf = strconv.AppendInt(e.buf, e.next, 10)
	e.buf = append(e.buf, `,"event":`...)
	e.buf = ev.AppendJSON(e.buf)
	e.buf = append(e.buf, "}\n"...)
	e.next++
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// close sends what is queued and waits until it has been.
func (e *emitter) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-e.done
}

func (e *emitter) run() {
	defer close(e.done)
	for {
		<-e.wake
		e.mu.Lock()
		batch, closed := e.buf, e.closed
		e.buf = nil
		e.mu.Unlock()
		if len(batch) > 0 {
			e.post(batch)
		}
		if closed {
			e.mu.Lock()
			rest := e.buf
			e.buf = nil
			e.mu.Unlock()
			if len(rest) > 0 {
				e.post(rest)
			}
			return
		}
	}
}

// post sends one batch, trying a few times: the events are what a
// client watches, not what the turn needs (its state is in the
// workflow), so a relay that stays away loses them.
func (e *emitter) post(batch []byte) {
	if e.url == "" {
		return
	}
	for try := 0; try < 3; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(batch))
		if err != nil {
			cancel()
			return
		}
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := e.client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		cancel()
		if err == nil && resp.StatusCode == http.StatusNoContent {
			return
		}
		time.Sleep(time.Duration(100*(try+1)) * time.Millisecond)
	}
}

// Relay receives the events of the turns a client submitted and passes
// each on once, in order.
type Relay struct {
	mu    sync.Mutex
	turns map[string]*relayTurn
}

type relayTurn struct {
	mu   sync.Mutex
	last int64
	out  func(event json.RawMessage)
}

// NewRelay returns an empty relay.
func NewRelay() *Relay { return &Relay{turns: make(map[string]*relayTurn)} }

// Watch passes the events of turn id to out from now on, until the
// returned function is called.
func (r *Relay) Watch(id string, out func(event json.RawMessage)) (stop func()) {
	t := &relayTurn{last: -1, out: out}
	r.mu.Lock()
	r.turns[id] = t
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.turns, id)
		r.mu.Unlock()
	}
}

// relayLine is one line a relay takes.
type relayLine struct {
	Turn  string          `json:"turn"`
	Seq   int64           `json:"seq"`
	Event json.RawMessage `json:"event"`
}

// ServeHTTP takes one batch; it answers once the batch's events have
// been passed on.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST events", http.StatusMethodNotAllowed)
		return
	}
	sc := bufio.NewScanner(req.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var l relayLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			http.Error(w, fmt.Sprintf("a line that is no event: %v", err), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		t := r.turns[l.Turn]
		r.mu.Unlock()
		if t == nil {
			continue // a turn nobody here watches (its client left)
		}
		t.mu.Lock()
		if l.Seq > t.last {
			t.last = l.Seq
			t.out(l.Event)
		}
		t.mu.Unlock()
	}
	if err := sc.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

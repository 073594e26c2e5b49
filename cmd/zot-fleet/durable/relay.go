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
// JSON Lines ({"turn","seq","attempt","event"}) to the relay of the
// client that submitted the turn. The k-th activity of a turn numbers its
// events from k<<seqShift on, and the relay keeps each activity's order
// on its own: the events of activities that run at once (tool calls side
// by side) each pass as they come, none held back by another's.
//
// An attempt that repeats a failed one is told apart by its attempt
// number. An activity whose attempts emit the same events (attempt 0:
// they repeat the numbers) has what the relay already passed dropped. A
// model call or a tool call made again is another answer: the relay
// passes the new attempt's events from its start and drops whatever a
// late event of an earlier attempt still brings; when the earlier
// attempt of a model call showed part of its answer, the new attempt's
// turn_start carries its attempt number, which tells a client to
// discard that part.

// emitter posts one activity's events.
type emitter struct {
	url, turn string
	client    *http.Client
	next      int64
	attempt   int32

	mu      sync.Mutex
	wake    chan struct{}
	buf     []byte
	flushes []chan struct{} // closed once what was queued before them is posted
	closed  bool
	done    chan struct{}
}

// newEmitter returns the emitter of an activity whose events are numbered
// from base; attempt is the activity's attempt when a new attempt's
// events replace the earlier one's (a model call, a tool call), 0 when
// every attempt emits the same events.
func newEmitter(client *http.Client, url, turn string, base int64, attempt int32) *emitter {
	e := &emitter{url: url, turn: turn, client: client, next: base, attempt: attempt, wake: make(chan struct{}, 1), done: make(chan struct{})}
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
	if e.attempt > 0 {
		e.buf = append(e.buf, `,"attempt":`...)
		e.buf = strconv.AppendInt(e.buf, int64(e.attempt), 10)
	}
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

// flush waits until what is queued has been posted.
func (e *emitter) flush() {
	ch := make(chan struct{})
	e.mu.Lock()
	e.flushes = append(e.flushes, ch)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-ch
}

// closeAlongside runs f while what is queued is sent, and returns once
// both are done. An activity stores its result in f: its events then
// reach the relay before the result is recorded (an attempt that finds
// a recorded result emits nothing), while the two waits overlap.
func (e *emitter) closeAlongside(f func()) {
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		e.close()
	}()
	f()
	<-sent
}

// end posts the turn's end after the events (the emitter closed), for
// the client that waits for the turn, which can answer it before the
// workflow closes; workflow is the id of the workflow ending with it (a
// sub-agent's turn, a child workflow, posts under its own).
func (e *emitter) end(out TurnOutput, workflow string) {
	body, err := json.Marshal(relayLine{Turn: e.turn, Seq: e.next, Attempt: e.attempt, Workflow: workflow, End: &out})
	if err != nil {
		return
	}
	e.next++
	e.post(append(body, '\n'))
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
		batch, closed, flushes := e.buf, e.closed, e.flushes
		e.buf, e.flushes = nil, nil
		e.mu.Unlock()
		if len(batch) > 0 {
			e.post(batch)
		}
		for _, ch := range flushes {
			close(ch)
		}
		if closed {
			e.mu.Lock()
			rest, flushes := e.buf, e.flushes
			e.buf, e.flushes = nil, nil
			e.mu.Unlock()
			if len(rest) > 0 {
				e.post(rest)
			}
			for _, ch := range flushes {
				close(ch)
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
// each on once, each activity's in order.
type Relay struct {
	mu    sync.Mutex
	turns map[string]*relayTurn
}

type relayTurn struct {
	id   string
	mu   sync.Mutex
	acts map[int64]*relayActivity // by the activity's index in the turn
	out  func(event json.RawMessage)
	end  func(TurnOutput)
}

// relayActivity is what a relay passed of one activity.
type relayActivity struct {
	attempt int32 // the attempt whose events pass
	last    int64 // the number of the last event passed of it; -1: none
	shown   bool  // an event of the activity has passed, of any attempt
}

// NewRelay returns an empty relay.
func NewRelay() *Relay { return &Relay{turns: make(map[string]*relayTurn)} }

// Watch passes the events of turn id to out from now on, and its end
// to end (when not nil) when the workflow of that id posts it after its
// last step's events, until the returned function is called.
func (r *Relay) Watch(id string, out func(event json.RawMessage), end func(TurnOutput)) (stop func()) {
	t := &relayTurn{id: id, acts: make(map[int64]*relayActivity), out: out, end: end}
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
	Turn    string          `json:"turn"`
	Seq     int64           `json:"seq"`
	Attempt int32           `json:"attempt"`
	Event   json.RawMessage `json:"event,omitempty"`
	// End, in place of an event, is the turn's end, which Workflow ends
	// with.
	End      *TurnOutput `json:"end,omitempty"`
	Workflow string      `json:"workflow,omitempty"`
}

// pass passes l on unless it was passed already or an attempt after its
// own has begun.
func (t *relayTurn) pass(l *relayLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := l.Seq >> seqShift
	a := t.acts[k]
	if a == nil {
		a = &relayActivity{attempt: l.Attempt, last: -1}
		t.acts[k] = a
	}
	event := l.Event
	switch {
	case l.Attempt < a.attempt:
		return // a late event of an attempt another replaced
	case l.Attempt > a.attempt:
		// Another answer begins: it passes from its start.
		a.attempt, a.last = l.Attempt, -1
		if a.shown {
			event = restarted(event, l.Attempt)
		}
	}
	if l.Seq <= a.last {
		return
	}
	a.last, a.shown = l.Seq, true
	switch {
	case l.End == nil:
		t.out(event)
	case t.end != nil && l.Workflow == t.id:
		t.end(*l.End)
	}
}

// restarted marks the first event of an attempt after one that showed
// part of its answer: a model call's turn_start carries the attempt.
func restarted(event json.RawMessage, attempt int32) json.RawMessage {
	ev, err := wire.DecodeEvent(event)
	if err != nil {
		return event
	}
	ts, ok := ev.(*wire.TurnStartEvent)
	if !ok {
		return event
	}
	n := int64(attempt)
	ts.Attempt = &n
	return ts.AppendJSON(nil)
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
		t.pass(&l)
	}
	if err := sc.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

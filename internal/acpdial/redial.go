package acpdial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// KindReconnected is the data.kind of the error a [Redial] answers a
// session/prompt with when the connection that carried it dropped: the
// session was resumed on a new connection, the turn's later updates came
// there, and the turn has now ended; its own answer (the stop reason)
// went to the lost connection and is not sent again.
const KindReconnected = "reconnected"

// KindConnectionLost is the data.kind of the error a [Redial] answers any
// other request with whose connection dropped before its answer came: it
// may or may not have been served.
const KindConnectionLost = "connection_lost"

// RedialOptions tune a [Redial].
type RedialOptions struct {
	// Attempts bounds the dials after a drop before the transport gives
	// up (its Read returns the last error); 0 means 10.
	Attempts int
	// Backoff is the wait before the first dial again, doubled each time
	// up to 2 s; 0 means 100 ms.
	Backoff time.Duration
	// Poll is how often the end of a turn whose connection dropped is
	// looked for (_zot/status); 0 means 200 ms.
	Poll time.Duration
	// OnReconnect, when set, is told each time a new connection took
	// over (after the sessions were resumed), or err after the last
	// attempt failed. It must not block.
	OnReconnect func(err error)
}

// Redial is a jsonrpc.Transport over connections that dial returns: when
// the one in use drops, it dials again, repeats the client's initialize,
// resumes every session the client had open (session/resume) and carries
// on, so the client's jsonrpc.Conn sees one connection.
//
// What the agent sent to the dropped connection is not sent again: a turn
// under way goes on in the daemon and its updates reach the new
// connection from the moment it resumed. The requests that were waiting
// for an answer on the dropped connection are answered by Redial: a
// session/prompt, once its turn has ended, with an error of kind
// [KindReconnected]; any other with one of kind [KindConnectionLost]. A
// late answer to the agent's own request of the dropped connection (a
// permission question, which the daemon asks again of the resumed one) is
// dropped, never delivered to a request of the new connection.
type Redial struct {
	dial func(ctx context.Context) (jsonrpc.Transport, error)
	opts RedialOptions

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	in     chan item      // what Read returns, in order
	wg     sync.WaitGroup // the pump and the recoveries
	wmu    sync.Mutex     // one writer on the current connection at a time

	mu       sync.Mutex
	cur      jsonrpc.Transport
	gen      int           // connections made so far, minus one
	ready    chan struct{} // closed while cur takes the client's writes
	init     json.RawMessage
	sessions map[string]openSession // open sessions, by id
	inflight map[string]clientCall  // the client's requests under way on cur, by raw id
	own      map[string]chan reply  // Redial's own requests, by id
	ownSeq   int
}

type item struct {
	msg []byte
	err error
}

type openSession struct {
	cwd string
}

type clientCall struct {
	method    string
	sessionID string // session/prompt, load, resume
	cwd       string // session/new, load, resume
}

type reply struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// head is what Redial reads of each message.
type head struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// NewRedial dials the first connection and returns the transport. dial
// is called again (with the transport's own context) after each drop.
func NewRedial(ctx context.Context, dial func(ctx context.Context) (jsonrpc.Transport, error), o RedialOptions) (*Redial, error) {
	if o.Attempts <= 0 {
		o.Attempts = 10
	}
	if o.Backoff <= 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	t, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	r := &Redial{
		dial: dial, opts: o, cur: t,
		in:       make(chan item, 64),
		ready:    make(chan struct{}),
		sessions: map[string]openSession{},
		inflight: map[string]clientCall{},
		own:      map[string]chan reply{},
	}
	close(r.ready)
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go r.pump(t)
	return r, nil
}

// Read returns the next message from the agent, or what Redial answers in
// a dropped connection's place.
func (r *Redial) Read(ctx context.Context) ([]byte, error) {
	select {
	case it := <-r.in:
		return it.msg, it.err
	case <-r.ctx.Done():
		return nil, jsonrpc.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends the client's messages on the current connection, waiting
// while a new one is being made.
func (r *Redial) Write(ctx context.Context, b *jsonrpc.Batch) error {
	for i := range b.Len() {
		if err := r.writeOne(ctx, b.Message(i)); err != nil {
			return err
		}
	}
	return nil
}

func (r *Redial) writeOne(ctx context.Context, msg []byte) error {
	r.mu.Lock()
	ready := r.ready
	r.mu.Unlock()
	select {
	case <-ready:
	case <-r.ctx.Done():
		return jsonrpc.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	var h head
	if json.Unmarshal(msg, &h) != nil {
		return r.send(msg)
	}
	r.mu.Lock()
	gen := r.gen
	switch {
	case h.Method != "" && len(h.ID) > 0:
		call := clientCall{method: h.Method}
		var p struct {
			SessionID string `json:"sessionId"`
			CWD       string `json:"cwd"`
		}
		_ = json.Unmarshal(h.Params, &p)
		call.sessionID, call.cwd = p.SessionID, p.CWD
		switch h.Method {
		case "initialize":
			r.init = append(json.RawMessage(nil), h.Params...)
		case "session/close", "session/delete":
			delete(r.sessions, p.SessionID)
		}
		r.inflight[string(h.ID)] = call
	case h.Method == "" && len(h.ID) > 0 && gen > 0:
		// An answer to the agent: only to a request of this connection.
		orig, ok := unrename(h.ID, gen)
		if !ok {
			r.mu.Unlock()
			return nil
		}
		var err error
		if msg, err = withID(msg, orig); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	r.mu.Unlock()
	return r.send(msg)
}

// send writes one message on the current connection. A failed write is
// not the client's error: the pump sees the drop and recovers.
func (r *Redial) send(msg []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	t := r.cur
	r.mu.Unlock()
	var b jsonrpc.Batch
	b.Add(msg)
	_ = t.Write(r.ctx, &b)
	return nil
}

// Close ends the connection and Redial's goroutines.
func (r *Redial) Close() error {
	r.mu.Lock()
	r.cancel() // under mu: a dial that ends now sees it (reconnect)
	t := r.cur
	r.mu.Unlock()
	err := t.Close()
	r.wg.Wait()
	return err
}

// put hands a message to Read.
func (r *Redial) put(it item) bool {
	select {
	case r.in <- it:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// pump reads the current connection, and makes a new one when it drops.
func (r *Redial) pump(t jsonrpc.Transport) {
	defer r.wg.Done()
	for {
		msg, err := t.Read(r.ctx)
		if err == nil {
			if msg = r.inbound(msg); msg != nil && !r.put(item{msg: msg}) {
				return
			}
			continue
		}
		var tooLong *jsonrpc.TooLongError
		if errors.As(err, &tooLong) {
			if !r.put(item{err: err}) {
				return
			}
			continue
		}
		if r.ctx.Err() != nil {
			return
		}
		if t = r.reconnect(err); t == nil {
			return
		}
	}
}

// inbound looks at a message from the agent: answers to Redial's own
// requests are taken, answers to the client's noted, and the agent's
// requests of a later connection renamed so that their ids never meet
// those of an earlier one.
func (r *Redial) inbound(msg []byte) []byte {
	var h head
	if json.Unmarshal(msg, &h) != nil {
		return msg
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.Method == "" && len(h.ID) > 0 {
		if ch, ok := r.own[string(h.ID)]; ok {
			delete(r.own, string(h.ID))
			ch <- reply{result: h.Result, err: h.Error}
			return nil
		}
		call, ok := r.inflight[string(h.ID)]
		delete(r.inflight, string(h.ID))
		if ok && h.Error == nil {
			switch call.method {
			case "session/new":
				var res struct {
					SessionID string `json:"sessionId"`
				}
				if json.Unmarshal(h.Result, &res) == nil && res.SessionID != "" {
					r.sessions[res.SessionID] = openSession{cwd: call.cwd}
				}
			case "session/load", "session/resume":
				r.sessions[call.sessionID] = openSession{cwd: call.cwd}
			}
		}
		return msg
	}
	if r.gen == 0 || h.Method == "" {
		return msg
	}
	if len(h.ID) > 0 {
		if out, err := withID(msg, rename(h.ID, r.gen)); err == nil {
			return out
		}
		return msg
	}
	if h.Method == "$/cancel_request" {
		var p map[string]json.RawMessage
		if json.Unmarshal(h.Params, &p) == nil && p["requestId"] != nil {
			p["requestId"] = rename(p["requestId"], r.gen)
			if params, err := json.Marshal(p); err == nil {
				if out, err := withField(msg, "params", params); err == nil {
					return out
				}
			}
		}
	}
	return msg
}

// reconnect dials again after cause dropped the connection and starts
// the recovery of the sessions; it returns the new connection, or nil
// when the transport is closed or every attempt failed.
func (r *Redial) reconnect(cause error) jsonrpc.Transport {
	r.mu.Lock()
	old := r.cur
	r.ready = make(chan struct{})
	lost := r.inflight
	r.inflight = map[string]clientCall{}
	for id, ch := range r.own {
		ch <- reply{err: jsonrpc.NewError(-32603, KindConnectionLost, "the connection dropped")}
		delete(r.own, id)
	}
	r.mu.Unlock()
	_ = old.Close()
	wait := r.opts.Backoff
	var t jsonrpc.Transport
	err := cause
	for range r.opts.Attempts {
		select {
		case <-time.After(wait):
		case <-r.ctx.Done():
			return nil
		}
		if wait *= 2; wait > 2*time.Second {
			wait = 2 * time.Second
		}
		if t, err = r.dial(r.ctx); err == nil {
			break
		}
		var refused *RefusedError
		if errors.As(err, &refused) {
			break // a token refused now is refused on the next try too
		}
	}
	if t == nil {
		if r.opts.OnReconnect != nil {
			r.opts.OnReconnect(err)
		}
		r.put(item{err: fmt.Errorf("the connection dropped (%v) and could not be made again: %w", cause, err)})
		return nil
	}
	r.mu.Lock()
	if r.ctx.Err() != nil {
		// Closed while dialing: Close has closed the old connection,
		// this one is ours to close.
		r.mu.Unlock()
		_ = t.Close()
		return nil
	}
	r.cur = t
	r.gen++
	ready := r.ready
	r.mu.Unlock()
	r.wg.Add(1)
	go r.recover(ready, lost)
	return t
}

// recover makes the new connection what the old one was (initialize, the
// sessions resumed), lets the client write again, and answers the
// requests the old one lost.
func (r *Redial) recover(ready chan struct{}, lost map[string]clientCall) {
	defer r.wg.Done()
	r.mu.Lock()
	init := r.init
	sessions := make(map[string]openSession, len(r.sessions))
	for id, s := range r.sessions {
		sessions[id] = s
	}
	r.mu.Unlock()
	if init == nil {
		init = json.RawMessage(`{"protocolVersion":1}`)
	}
	_, err := r.call("initialize", init)
	for id, s := range sessions {
		if err != nil {
			break
		}
		if _, rerr := r.call("session/resume", map[string]any{"sessionId": id, "cwd": s.cwd, "mcpServers": []any{}}); rerr != nil {
			r.mu.Lock()
			delete(r.sessions, id)
			r.mu.Unlock()
		}
	}
	close(ready)
	if r.opts.OnReconnect != nil {
		r.opts.OnReconnect(err)
	}
	for id, call := range lost {
		if call.method == "session/prompt" && err == nil {
			r.awaitTurnEnd(call.sessionID)
			r.answer(id, KindReconnected, "the connection dropped during the turn: the session was resumed on a new connection and the turn has ended; its answer went to the lost connection")
			continue
		}
		r.answer(id, KindConnectionLost, fmt.Sprintf("the connection dropped before %s was answered; it may or may not have been served", call.method))
	}
}

// awaitTurnEnd waits until the daemon says the session runs no turn.
func (r *Redial) awaitTurnEnd(sessionID string) {
	for r.ctx.Err() == nil {
		raw, err := r.call("_zot/status", map[string]any{})
		if err != nil {
			return
		}
		var st struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				Busy      bool   `json:"busy"`
			} `json:"sessions"`
		}
		if json.Unmarshal(raw, &st) != nil {
			return
		}
		busy := false
		for _, s := range st.Sessions {
			if s.SessionID == sessionID && s.Busy {
				busy = true
			}
		}
		if !busy {
			return
		}
		select {
		case <-time.After(r.opts.Poll):
		case <-r.ctx.Done():
		}
	}
}

// answer hands the client an error answer to its request id.
func (r *Redial) answer(id, kind, msg string) {
	e := jsonrpc.NewError(-32603, kind, "%s", msg)
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", json.RawMessage(id), e})
	if err == nil {
		r.put(item{msg: body})
	}
}

// call makes a request of Redial's own on the current connection.
func (r *Redial) call(method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan reply, 1)
	r.mu.Lock()
	r.ownSeq++
	id := strconv.Quote("redial-" + strconv.Itoa(r.ownSeq))
	r.own[id] = ch
	r.mu.Unlock()
	msg, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", json.RawMessage(id), method, raw})
	if err != nil {
		return nil, err
	}
	_ = r.send(msg)
	select {
	case rep := <-ch:
		if rep.err != nil {
			return nil, rep.err
		}
		return rep.result, nil
	case <-r.ctx.Done():
		return nil, jsonrpc.ErrClosed
	}
}

// rename gives an agent's request id of connection gen a name of its own.
func rename(id json.RawMessage, gen int) json.RawMessage {
	out, _ := json.Marshal(fmt.Sprintf("g%d|%s", gen, id))
	return out
}

// unrename returns the id rename named, when it names one of gen.
func unrename(id json.RawMessage, gen int) (json.RawMessage, bool) {
	var s string
	if json.Unmarshal(id, &s) != nil {
		return nil, false
	}
	rest, ok := strings.CutPrefix(s, "g"+strconv.Itoa(gen)+"|")
	if !ok {
		return nil, false
	}
	return json.RawMessage(rest), true
}

func withID(msg []byte, id json.RawMessage) ([]byte, error) { return withField(msg, "id", id) }

// withField returns msg with one member replaced.
func withField(msg []byte, key string, val json.RawMessage) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, err
	}
	m[key] = val
	return json.Marshal(m)
}

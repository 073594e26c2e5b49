package acpserver

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/wire"
)

// session is one open ACP session: an engine Session, the connections
// that have it open, and the subscription its updates go through.
type acpSession struct {
	agent *Agent
	id    string
	cwd   string
	eng   *engine.Session
	// owner is the principal the session belongs to: "" for the
	// daemon's own user, else a token's name (principals.go).
	owner string
	// joined, when not nil, is closed (and dropped) the next time a
	// client's opening answer is queued: a permission question waiting
	// for a client that reconnects (approval.go). Guarded by mu.
	joined chan struct{}

	mu      sync.Mutex
	clients []*conn // connections that have it open, in the order they opened it
	// unanswered are the clients whose session/new, load or resume
	// answer is not queued yet, with the updates for everyone held back
	// for them meanwhile: a client learns of a session by its answer,
	// before any update of it. Only what is queued for it alone (a
	// replay) reaches it before; the rest follows the answer, in order
	// (answered).
	unanswered map[*conn][]item
	turn       *turn      // the running prompt or compaction, nil when idle
	events     eventQueue // the external events waiting to run (events.go)
	// pins counts requests that found or opened the session and have not
	// yet attached their connection (or given up): it is not closed
	// under them (lifecycle.go).
	pins int
	// rejectAlways are the tools the user rejected for the rest of the
	// session ("reject always"); allowAlways those allowed (the engine
	// remembers them too, this is for the answer's bookkeeping).
	rejectAlways map[string]bool
	closing      bool
	x            sessionExtras // modes, terminals, title (modes.go)

	// The updates go straight onto the queues of the connections that
	// have the session open, in the order they are handed on: sendMu
	// orders the hand-offs (the turn's Sink, on the engine's worker, and
	// the door's own updates), and nothing under it waits. Each client
	// has its own bounded queue (its connection's): the turn waits for
	// room only in the queue of the client that sent it (Work.Ready), so
	// a client that reads slowly slows its own turns, and one that falls
	// far behind while others prompt is dropped alone (jsonrpc.Conn.Post).
	sendMu  sync.Mutex
	ended   bool          // the session is closed: nothing more is handed on
	targets []*conn       // scratch space of hand, under sendMu
	stop    chan struct{} // closed by close: the commands are no longer told (commands.go)
	closed  chan struct{} // closed when close has ended

	// droppedNotices is set once a notice was dropped for a client that
	// is behind.
	droppedNotices atomic.Bool

	// textHeads are the frames of the session's text chunks up to the
	// text's value, made once (encode.go): [0] an agent_message_chunk,
	// [1] an agent_thought_chunk.
	textHeads [2][]byte
}

// item is one entry of a session's updates.
type item struct {
	update *acp.SessionUpdate
	only   *conn // when set, the update goes to this connection only (a replay)
	except *conn // when set, the update goes to every connection but this one
	// barrier, when set, is closed once every item before it was handed
	// on to only, which may mean after only's opening answer (a turn's
	// end: see sink).
	barrier chan struct{}
	// answered, when set, is a client whose opening answer is queued:
	// the updates held back for it are handed on, and it gets them all
	// from here on (session.answered).
	answered *conn
	note     any    // when set, sent as the params of a session/update as is (to every connection)
	method   string // when set, the method note is sent as, instead of session/update
	keep     bool   // a note kept for the next client when no client has the session open (notify.go)
	// droppable is set for a note the schema lets a client that is
	// behind miss (wire.DroppableEvent: a notice, a panel's redraw).
	droppable bool
	// text, when update, note and barrier are unset, is a text chunk of
	// the agent's answer (of its thought, with thought set): the deltas
	// of a turn, most of what it sends, need no SessionUpdate.
	text    string
	thought bool
}

// newSession wraps an engine session.
func (a *Agent) newSession(id, cwd string, eng *engine.Session) *acpSession {
	s := &acpSession{
		agent: a, id: id, cwd: cwd, eng: eng,
		rejectAlways: map[string]bool{},
		stop:         make(chan struct{}),
		closed:       make(chan struct{}),
	}
	s.textHeads = [2][]byte{textHead(id, false), textHead(id, true)} // encode.go
	return s
}

// push hands items on to the connections they are for, in order, without
// waiting: onto each connection's queue, or held for a client whose
// opening answer is not queued yet. A barrier closes once what was
// pushed before it is queued for its client.
func (s *acpSession) push(items ...item) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.ended {
		releaseBarriers(items)
		return
	}
	for i := range items {
		s.targets = s.hand(&items[i], s.targets[:0])
	}
	clear(s.targets)
}

// hand hands one item on; targets is scratch space for the connections
// it goes to, returned for reuse. The caller holds s.sendMu.
func (s *acpSession) hand(it *item, targets []*conn) []*conn {
	switch {
	case it.barrier != nil:
		if it.only != nil {
			s.mu.Lock()
			held, ok := s.unanswered[it.only]
			if ok {
				// Updates for only are held until its opening answer;
				// this barrier follows them.
				s.unanswered[it.only] = append(held, *it)
			}
			s.mu.Unlock()
			if ok {
				return targets
			}
		}
		close(it.barrier)
	case it.answered != nil:
		c := it.answered
		s.mu.Lock()
		held, ok := s.unanswered[c]
		delete(s.unanswered, c)
		if s.joined != nil {
			close(s.joined)
			s.joined = nil
		}
		s.mu.Unlock()
		if !ok {
			return targets // it left meanwhile
		}
		for i := range held {
			held[i].only = c
			targets = s.hand(&held[i], targets[:0])
		}
	case it.update != nil || it.note != nil || it.text != "":
		if it.only != nil {
			targets = append(targets, it.only)
		} else {
			s.mu.Lock()
			for _, c := range s.clients {
				if c == it.except {
					continue
				}
				if held, ok := s.unanswered[c]; ok {
					s.holdLocked(c, held, it)
					continue
				}
				targets = append(targets, c)
			}
			if len(s.clients) == 0 && it.keep {
				s.keepUnheardLocked(it)
			}
			s.mu.Unlock()
		}
		if it.droppable {
			targets = s.notBehind(targets)
		}
		if len(targets) == 0 {
			// Nobody to tell (the prompt's own text, told to the other
			// clients of a session that has none): not encoded at all.
			return targets
		}
		if it.update == nil && it.note == nil && len(targets) == 1 {
			if err := s.sendText(targets[0], it.text, it.thought); err != nil {
				s.sendFailed(targets[0], err)
			}
			return targets
		}
		frame, err := s.frame(it) // encoded once for every connection (encode.go)
		if err != nil {
			s.agent.logf("session %s: %v", s.id, err)
			return targets
		}
		for _, c := range targets {
			// Post never waits: a client far behind is dropped by its
			// connection, alone.
			if err := c.c.Post(frame); err != nil {
				s.sendFailed(c, err)
			}
		}
	}
	return targets
}

// notBehind keeps the targets whose queues are not past their bound; the
// first drop of the session is logged.
func (s *acpSession) notBehind(targets []*conn) []*conn {
	n := len(targets)
	targets = slices.DeleteFunc(targets, func(c *conn) bool { return c.c.Behind() })
	if len(targets) < n && !s.droppedNotices.Swap(true) {
		s.agent.logf("session %s: a client is not reading: dropping what extensions push to it until it catches up", s.id)
	}
	return targets
}

// sendFailed logs that an update could not be handed to c, once per
// connection: after a write error every later frame to it fails the same
// way (a client that left in the middle of replaying a long session
// would otherwise leave a line per message). A connection that ended
// (ErrClosed) is not logged at all: its end is.
func (s *acpSession) sendFailed(c *conn, err error) {
	if errors.Is(err, jsonrpc.ErrClosed) || c.sendFailed.Swap(true) {
		return
	}
	s.agent.logf("session %s: update to %s: %v (later updates that fail to reach it are not logged)", s.id, c.c.Peer().Label, err)
}

// attach records that c has the session open, dropping the pin of the
// request that found it. c is told nothing of the session but what is
// queued for it alone until answered(c).
func (s *acpSession) attach(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins > 0 {
		s.pins--
	}
	if !slices.Contains(s.clients, c) {
		s.clients = append(s.clients, c)
		if s.unanswered == nil {
			s.unanswered = map[*conn][]item{}
		}
		s.unanswered[c] = nil
	}
}

// answered records that the answer that opened the session for c is
// queued: the updates held back for c follow it, in order, and the
// session's updates go to c from then on. It is handed on in order with
// every other item: what is handed on before it is held, what after
// goes to c at once.
func (s *acpSession) answered(c *conn) {
	s.push(item{answered: c})
}

// maxHeld bounds the updates held back for a client until its opening
// answer: more (another client's long turn during a long replay) are
// dropped for it, and logged.
const maxHeld = 4096

// holdLocked holds it back for c, whose opening answer is not queued
// yet; the caller holds s.mu.
func (s *acpSession) holdLocked(c *conn, held []item, it *item) {
	if len(held) >= maxHeld {
		if len(held) == maxHeld {
			s.agent.logf("session %s: more than %d updates arrived before the answer to %s; later ones are not sent to it", s.id, maxHeld, c.c.Peer().Label)
			s.unanswered[c] = append(held, item{}) // logged once
		}
		return
	}
	s.unanswered[c] = append(held, *it)
}

// hasClientBesides reports whether a connection other than c has the
// session open.
func (s *acpSession) hasClientBesides(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients) > 1 || (len(s.clients) == 1 && s.clients[0] != c)
}

// detach records that c no longer has the session open, and reports how
// many connections still do.
func (s *acpSession) detach(c *conn) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients = slices.DeleteFunc(s.clients, func(x *conn) bool { return x == c })
	releaseBarriers(s.unanswered[c])
	delete(s.unanswered, c)
	return len(s.clients)
}

// releaseBarriers closes the barriers among held, whose updates will not
// be handed on: their client left, or the session closed.
func releaseBarriers(held []item) {
	for i := range held {
		if held[i].barrier != nil {
			close(held[i].barrier)
		}
	}
}

// release detaches c; when no connection has the session open any more,
// the session is closed once its running turn (which finishes into the
// file) has ended, unless a connection opened it again meanwhile.
func (s *acpSession) release(c *conn) {
	if s.detach(c) > 0 {
		return
	}
	a := s.agent
	if !a.track() {
		return // Close is closing every session
	}
	go func() {
		defer a.wg.Done()
		_ = s.eng.Wait(a.ctx)
		a.closeIfIdle(s)
	}()
}

// close ends the session: its running turn is cancelled (and ends into
// the file), the file is closed, and nothing more is handed on.
func (s *acpSession) close() error {
	s.mu.Lock()
	already := s.closing
	s.closing = true
	s.mu.Unlock()
	if already {
		<-s.closed
		return nil
	}
	defer close(s.closed)
	s.unwatchExtensions() // commands.go
	err := s.eng.Close()  // its extensions and MCP servers stop with it
	close(s.stop)
	s.sendMu.Lock()
	s.ended = true
	s.sendMu.Unlock()
	s.mu.Lock()
	for c, held := range s.unanswered {
		releaseBarriers(held)
		s.unanswered[c] = nil
	}
	s.mu.Unlock()
	return err
}

// clientCount returns how many connections have the session open.
func (s *acpSession) clientCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// status is the session's line in _zot/status.
func (s *acpSession) status() acp.SessionStatus {
	st := s.eng.State()
	sb := s.eng.Sandbox()
	return acp.SessionStatus{
		SessionID:    s.id,
		CWD:          s.cwd,
		Busy:         st.Busy,
		Clients:      int64(s.clientCount()),
		MessageCount: st.MessageCount,
		Sandbox: &acp.SandboxStatus{Mode: string(sb.Mode), Network: sb.Network,
			Writable: sb.Writable, EnforcedBy: sb.EnforcedBy},
	}
}

// engineEvents is the Sink of one turn: it turns each engine event into
// the updates it stands for and queues them.
func (s *acpSession) sink(t *turn) engine.Sink {
	return func(_ context.Context, ev wire.Event) {
		// A message committed to the transcript is in the session file
		// before its event comes here (engine.Session.Save).
		var except *conn
		if um, ok := ev.(*wire.UserMessageEvent); ok && (um.Kind != "" || s.hasClientBesides(t.from)) {
			// The client that sent the prompt has it; the others that
			// have the session open are told what was asked. A steer,
			// a context or an event is news to every client.
			if um.Kind == "" {
				except = t.from
			}
			var ups []acp.SessionUpdate
			for _, b := range um.Content {
				if tb, ok := b.(*wire.TextBlock); ok && tb.Text != "" {
					ups = append(ups, acp.SessionUpdate{UserMessageChunk: textChunk(tb.Text)})
				}
			}
			for i := range ups {
				s.push(item{update: &ups[i], except: except})
			}
		}
		switch e := ev.(type) {
		case *wire.TextDeltaEvent:
			switch {
			case e.Delta == "":
			case t.retry != "":
				s.push(item{update: t.retried(e.Delta, false)})
			default:
				s.push(item{text: e.Delta})
			}
			return
		case *wire.ThinkingDeltaEvent:
			switch {
			case e.Delta == "":
			case t.retry != "":
				s.push(item{update: t.retried(e.Delta, true)})
			default:
				s.push(item{text: e.Delta, thought: true})
			}
			return
		}
		ups := t.translate(ev)
		if len(ups) > 0 {
			items := make([]item, len(ups))
			for i := range ups {
				items[i] = item{update: &ups[i]}
			}
			s.push(items...)
		}
		if _, last := ev.(*wire.DoneEvent); last {
			// The answer waits for this barrier: every update of the turn
			// is then queued on the connections before it, on the
			// prompting client's after its opening answer too (a client
			// that sent session/load and session/prompt at once).
			s.mu.Lock()
			if s.turn == t {
				s.turn = nil
				s.wakeEventsLocked() // events.go
			}
			s.mu.Unlock()
			s.push(item{barrier: t.done, only: t.from})
		}
	}
}

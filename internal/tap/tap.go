// Package tap records what crosses zot's doors and what the agent does
// behind them, for the inspector page (internal/inspect): every frame of
// every connection, both ways (a `zot rpc` line, an ACP message on any
// transport), with its direction, connection, session, time, size and
// the request it answers; every model call and the HTTP exchange under
// it; every tool call.
//
// A Tap is off unless a door is given one: the doors hold a nil function
// and check it, so zot without --inspect pays a nil check per frame.
// When on, memory is bounded: each session's records are a ring
// (Options.PerSession records, Options.PerSessionBytes bytes), a frame
// longer than Options.MaxFrameBytes is kept cut, and at most
// Options.MaxSessions rings are kept (the one written longest ago goes
// first).
//
// The functions a door calls (Conn.Frame, the middleware, the HTTP
// transport) copy what they keep and return at once; the checking of a
// frame against the schema waits until a reader asks for the record.
package tap

import (
	"encoding/json"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Options.
const (
	DefaultPerSession      = 2000
	DefaultPerSessionBytes = 8 << 20
	DefaultMaxSessions     = 64
	DefaultMaxFrameBytes   = 256 << 10
	// NoSession is the ring of the records that belong to no session
	// (initialize, session/list, a connection's first frames).
	NoSession = ""
)

// Options bounds what a Tap keeps.
type Options struct {
	// PerSession bounds the records kept for one session; 0 means
	// DefaultPerSession.
	PerSession int
	// PerSessionBytes bounds the bytes of the frames kept for one
	// session; 0 means DefaultPerSessionBytes.
	PerSessionBytes int
	// MaxSessions bounds how many sessions' rings are kept; 0 means
	// DefaultMaxSessions.
	MaxSessions int
	// MaxFrameBytes is the longest frame kept whole; a longer one is kept
	// cut to this length (Record.Cut). 0 means DefaultMaxFrameBytes.
	MaxFrameBytes int
}

func (o Options) withDefaults() Options {
	if o.PerSession <= 0 {
		o.PerSession = DefaultPerSession
	}
	if o.PerSessionBytes <= 0 {
		o.PerSessionBytes = DefaultPerSessionBytes
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = DefaultMaxFrameBytes
	}
	return o
}

// The kinds of Record.
const (
	KindFrame = "frame" // a message through a door
	KindModel = "model" // a model call (agent middleware)
	KindHTTP  = "http"  // an HTTP exchange with a provider
	KindTool  = "tool"  // a tool call that ran (agent middleware)
)

// Record is one thing the tap saw. Its JSON form is what the inspector
// page reads and what an export holds.
type Record struct {
	Seq  uint64    `json:"seq"`
	At   time.Time `json:"at"`
	Kind string    `json:"kind"`
	// Door is "rpc" or "acp" for a frame.
	Door string `json:"door,omitempty"`
	// Conn names the connection of a frame ("c1", "c2", …).
	Conn    string `json:"conn,omitempty"`
	Session string `json:"session,omitempty"`
	// Dir is "in" (from the client to zot) or "out" for a frame; "out"
	// for a model or HTTP call (from zot to the provider).
	Dir  string `json:"dir,omitempty"`
	Size int    `json:"size"`
	// Method is a frame's method (ACP), command or event type (zot rpc);
	// an answer has its request's. For a call it is the model, the
	// HTTP method and host, or the tool.
	Method string `json:"method,omitempty"`
	// Role is "request", "response", "error", "notification" or "event".
	Role string `json:"role,omitempty"`
	// ID is a request's or answer's id as JSON.
	ID string `json:"id,omitempty"`
	// Update is an ACP session/update's sessionUpdate, a zot rpc event's
	// type again: what chunk runs fold on.
	Update string `json:"update,omitempty"`
	// Pair is the Seq of the request an answer answers (a zot rpc done
	// the prompt it ends).
	Pair uint64 `json:"pair,omitempty"`
	// Ms is an answer's latency from its request, or a call's duration,
	// in milliseconds.
	Ms float64 `json:"ms,omitempty"`
	// Valid is "ok" or "bad" when the frame was checked against zot's
	// schema, "" when there is none for it (Problem says why it is bad).
	Valid   string `json:"valid,omitempty"`
	Problem string `json:"problem,omitempty"`
	// Frame is the message as it crossed (cut to MaxFrameBytes when
	// Cut: then it is a JSON string of the cut bytes).
	Frame json.RawMessage `json:"frame,omitempty"`
	Cut   bool            `json:"cut,omitempty"`

	// Calls.
	URL     string  `json:"url,omitempty"`
	Status  int     `json:"status,omitempty"`
	TTFB    float64 `json:"ttfb_ms,omitempty"`
	Events  int     `json:"events,omitempty"`
	Outcome string  `json:"outcome,omitempty"` // ok, error, aborted
	Error   string  `json:"error,omitempty"`
	Stop    string  `json:"stop,omitempty"`
	TokIn   int     `json:"tokens_in,omitempty"`
	TokOut  int     `json:"tokens_out,omitempty"`
	Step    int     `json:"step,omitempty"`
	ToolID  string  `json:"tool_id,omitempty"`

	checked sync.Once
	check   func(r *Record) // the schema check, run once by Checked
	bytes   int             // what the record holds, for the ring's bound
}

// Checked returns r with its frame checked against the schema (once).
func (r *Record) Checked() *Record {
	r.checked.Do(func() {
		if r.check != nil && !r.Cut {
			r.check(r)
		}
	})
	return r
}

// ConnInfo describes a connection the tap saw.
type ConnInfo struct {
	ID        string    `json:"id"`
	Door      string    `json:"door"`
	Transport string    `json:"transport"`
	Label     string    `json:"label"`
	Opened    time.Time `json:"opened"`
	Ended     time.Time `json:"ended,omitzero"`
	FramesIn  int       `json:"frames_in"`
	FramesOut int       `json:"frames_out"`
	BytesIn   int       `json:"bytes_in"`
	BytesOut  int       `json:"bytes_out"`
}

// SessionInfo describes a session's ring.
type SessionInfo struct {
	ID    string    `json:"id"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	Kept  int       `json:"kept"`
	// Let go counts the records the ring let go of to stay in its bound.
	LetGo int `json:"let_go"`
}

// Tap records traffic. Its methods are safe for concurrent use.
type Tap struct {
	opts  Options
	seq   atomic.Uint64
	conns atomic.Int64

	mu        sync.Mutex
	rings     map[string]*ring
	connInfo  []*ConnInfo
	subs      map[*Sub]struct{}
	lostRings int // sessions whose rings were let go for MaxSessions
}

// New returns a Tap keeping what opts allows.
func New(opts Options) *Tap {
	return &Tap{opts: opts.withDefaults(), rings: map[string]*ring{}, subs: map[*Sub]struct{}{}}
}

// Options returns the tap's bounds.
func (t *Tap) Options() Options { return t.opts }

// add keeps r in its session's ring, then hands it to the subscribers
// that have room. r.Seq is set already (from t.seq).
func (t *Tap) add(r *Record) {
	r.bytes = len(r.Frame) + len(r.URL) + len(r.Error) + 256
	t.mu.Lock()
	g := t.rings[r.Session]
	if g == nil {
		if len(t.rings) >= t.opts.MaxSessions {
			t.evictLocked()
		}
		g = &ring{first: r.At}
		t.rings[r.Session] = g
	}
	g.push(r, t.opts.PerSession, t.opts.PerSessionBytes)
	for s := range t.subs {
		s.offer(r)
	}
	t.mu.Unlock()
}

// evictLocked lets go of the ring written longest ago.
func (t *Tap) evictLocked() {
	var oldest string
	var at time.Time
	first := true
	for id, g := range t.rings {
		if first || g.last.Before(at) {
			oldest, at, first = id, g.last, false
		}
	}
	delete(t.rings, oldest)
	t.lostRings++
}

// Snapshot is everything the tap holds.
type Snapshot struct {
	Records     []*Record      `json:"records"`
	Sessions    []SessionInfo  `json:"sessions"`
	Connections []ConnInfo     `json:"connections"`
	Limits      SnapshotLimits `json:"limits"`
}

// SnapshotLimits are the tap's bounds and what they let go of.
type SnapshotLimits struct {
	PerSession      int `json:"per_session"`
	PerSessionBytes int `json:"per_session_bytes"`
	MaxSessions     int `json:"max_sessions"`
	MaxFrameBytes   int `json:"max_frame_bytes"`
	SessionsLetGo   int `json:"sessions_let_go"`
}

// Snapshot returns the records kept (of session only, unless all),
// oldest first, with the sessions and connections.
func (t *Tap) Snapshot(session string, all bool) Snapshot {
	t.mu.Lock()
	var out Snapshot
	for id, g := range t.rings {
		out.Sessions = append(out.Sessions, SessionInfo{ID: id, First: g.first, Last: g.last, Kept: g.len(), LetGo: g.letGo})
		if all || id == session {
			out.Records = g.appendTo(out.Records)
		}
	}
	for _, c := range t.connInfo {
		out.Connections = append(out.Connections, *c)
	}
	out.Limits = SnapshotLimits{PerSession: t.opts.PerSession, PerSessionBytes: t.opts.PerSessionBytes,
		MaxSessions: t.opts.MaxSessions, MaxFrameBytes: t.opts.MaxFrameBytes, SessionsLetGo: t.lostRings}
	t.mu.Unlock()
	sort.Slice(out.Records, func(i, j int) bool { return out.Records[i].Seq < out.Records[j].Seq })
	sort.Slice(out.Sessions, func(i, j int) bool { return out.Sessions[i].First.Before(out.Sessions[j].First) })
	for _, r := range out.Records {
		r.Checked()
	}
	return out
}

// ring is one session's records, oldest first, within its bounds.
type ring struct {
	recs  []*Record
	head  int // recs[head:] are kept
	bytes int
	letGo int
	first time.Time
	last  time.Time
}

func (g *ring) len() int { return len(g.recs) - g.head }

func (g *ring) push(r *Record, max, maxBytes int) {
	g.recs = append(g.recs, r)
	g.bytes += r.bytes
	g.last = r.At
	for g.len() > 1 && (g.len() > max || g.bytes > maxBytes) {
		g.bytes -= g.recs[g.head].bytes
		g.recs[g.head] = nil
		g.head++
		g.letGo++
	}
	if g.head > 64 && g.head*2 > len(g.recs) {
		n := copy(g.recs, g.recs[g.head:])
		clear(g.recs[n:])
		g.recs, g.head = g.recs[:n], 0
	}
}

func (g *ring) appendTo(out []*Record) []*Record { return append(out, g.recs[g.head:]...) }

// Sub is a live reader of the records as they are added.
type Sub struct {
	t    *Tap
	c    chan *Record
	lost atomic.Int64
}

// Subscribe returns a reader of the records added from now on, holding
// up to buf waiting; a record that finds it full is lost (Lost counts
// them), so a slow reader never holds a door up.
func (t *Tap) Subscribe(buf int) *Sub {
	s := &Sub{t: t, c: make(chan *Record, buf)}
	t.mu.Lock()
	t.subs[s] = struct{}{}
	t.mu.Unlock()
	return s
}

// C returns the channel the records come on.
func (s *Sub) C() <-chan *Record { return s.c }

// Lost returns how many records found the reader full, and resets it.
func (s *Sub) Lost() int64 { return s.lost.Swap(0) }

// Close ends the subscription; C is not closed.
func (s *Sub) Close() {
	s.t.mu.Lock()
	delete(s.t.subs, s)
	s.t.mu.Unlock()
}

func (s *Sub) offer(r *Record) {
	select {
	case s.c <- r:
	default:
		s.lost.Add(1)
	}
}

package tap

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// The doors of Conn.
const (
	DoorRPC = "rpc" // zot rpc: NDJSON commands, responses and events
	DoorACP = "acp" // zot daemon, zot acp, the terminal: ACP's JSON-RPC
)

// maxPending bounds the requests a connection waits for answers to; past
// it the oldest are forgotten (their answers then show unpaired).
const maxPending = 4096

// Conn is one connection's view of the tap.
type Conn struct {
	t    *Tap
	info *ConnInfo
	door string

	mu      sync.Mutex
	pending map[string]pending // by direction of the request and id
	order   []string           // pending's keys, oldest first
	// session is the session of a zot rpc connection, asked at each
	// frame (it changes with load_session and clear).
	session func() string
}

type pending struct {
	req     *Record
	method  string
	session string
}

// Conn registers a connection through door ("rpc", "acp") over
// transport, named label in the list of connections.
func (t *Tap) Conn(door, transport, label string) *Conn {
	id := "c" + strconv.FormatInt(t.conns.Add(1), 10)
	info := &ConnInfo{ID: id, Door: door, Transport: transport, Label: label, Opened: time.Now().UTC()}
	t.mu.Lock()
	t.connInfo = append(t.connInfo, info)
	if len(t.connInfo) > 256 { // the oldest ended connections go first
		for i, c := range t.connInfo {
			if !c.Ended.IsZero() {
				t.connInfo = append(t.connInfo[:i], t.connInfo[i+1:]...)
				break
			}
		}
	}
	t.mu.Unlock()
	return &Conn{t: t, info: info, door: door, pending: map[string]pending{}}
}

// RPC registers a zot rpc connection whose frames belong to the session
// session names (asked at each frame).
func (t *Tap) RPC(transport, label string, session func() string) *Conn {
	c := t.Conn(DoorRPC, transport, label)
	c.session = session
	return c
}

// JSONRPC is jsonrpc.Options.Tap for ACP connections: each connection
// a Conn is made for is registered with its peer's transport and label.
func (t *Tap) JSONRPC(peer jsonrpc.Peer) (see func(jsonrpc.Traffic), ended func()) {
	c := t.Conn(DoorACP, peer.Transport, peer.Label)
	return func(tr jsonrpc.Traffic) { c.Frame(tr.Dir == jsonrpc.In, tr.At, tr.Message) }, c.End
}

// End marks the connection ended.
func (c *Conn) End() {
	c.t.mu.Lock()
	c.info.Ended = time.Now().UTC()
	c.t.mu.Unlock()
}

// probe is what the tap reads of a frame, in one decode: zot rpc's
// members and JSON-RPC's, and of ACP's params and result what names the
// session.
type probe struct {
	ID       json.RawMessage `json:"id"`
	Type     string          `json:"type"`
	Command  string          `json:"command"`
	PromptID json.RawMessage `json:"prompt_id"`
	Method   string          `json:"method"`
	Params   acpParams       `json:"params"`
	Result   acpParams       `json:"result"`
	Error    json.RawMessage `json:"error"`
}

// readProbe decodes what the tap reads of msg. A member of another type
// than the tap reads (params that are an array, a result that is not an
// object) is left out, not a failure.
func readProbe(msg []byte, p *probe) error {
	err := json.Unmarshal(msg, p)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}

// acpParams is what the tap reads of an ACP message's params or result.
type acpParams struct {
	SessionID string `json:"sessionId"`
	Update    struct {
		SessionUpdate string `json:"sessionUpdate"`
	} `json:"update"`
}

// Frame records one message of the connection: in from the client, or
// out to it, at at. msg is the caller's: Frame copies what it keeps.
func (c *Conn) Frame(in bool, at time.Time, msg []byte) {
	r := &Record{Seq: c.t.seq.Add(1), At: at.UTC(), Kind: KindFrame, Door: c.door, Conn: c.info.ID, Dir: "out", Size: len(msg)}
	if in {
		r.Dir = "in"
	}
	if len(msg) > c.t.opts.MaxFrameBytes {
		r.Cut = true
		r.Frame, _ = json.Marshal(string(msg[:c.t.opts.MaxFrameBytes]))
	} else {
		r.Frame = bytes.Clone(msg)
	}
	var p probe
	if err := readProbe(msg, &p); err != nil {
		r.Valid, r.Problem = "bad", "not JSON: "+err.Error()
		r.checked.Do(func() {})
	} else if c.door == DoorRPC {
		c.rpcFrame(r, &p)
	} else {
		c.acpFrame(r, &p)
	}
	c.t.mu.Lock()
	if in {
		c.info.FramesIn++
		c.info.BytesIn += len(msg)
	} else {
		c.info.FramesOut++
		c.info.BytesOut += len(msg)
	}
	c.t.mu.Unlock()
	c.t.add(r)
}

// rpcFrame reads a zot rpc line: a command in; a response or an event out.
func (c *Conn) rpcFrame(r *Record, p *probe) {
	if c.session != nil {
		r.Session = c.session()
	}
	id := string(p.ID)
	if id == "null" {
		id = ""
	}
	r.ID = id
	switch {
	case r.Dir == "in":
		r.Method, r.Role = p.Type, "request"
		r.check = checkRPCCommand
		if id != "" {
			c.expect("in", id, r)
			if p.Type == "prompt" || p.Type == "compact" || p.Type == "external_event" {
				c.expect("work", id, r) // its done ends it
			}
		}
	case p.Type == "response":
		r.Method, r.Role = p.Command, "response"
		if bytes.Contains(r.Frame, []byte(`"success":false`)) {
			r.Role = "error"
		}
		r.check = checkRPCFrame
		c.answer("in", id, r)
	default:
		r.Method, r.Role, r.Update = p.Type, "event", p.Type
		r.check = checkRPCFrame
		if p.Type == "done" && len(p.PromptID) > 0 {
			c.answer("work", string(p.PromptID), r)
		}
	}
}

// acpFrame reads a JSON-RPC message of ACP.
func (c *Conn) acpFrame(r *Record, p *probe) {
	hasID := len(p.ID) > 0 && string(p.ID) != "null"
	if hasID {
		r.ID = string(p.ID)
	}
	switch {
	case p.Method != "":
		r.Method, r.Session, r.Update = p.Method, p.Params.SessionID, p.Params.Update.SessionUpdate
		if hasID {
			r.Role = "request"
			c.expect(r.Dir, r.ID, r)
		} else {
			r.Role = "notification"
		}
		r.check = checkACP(p.Method, r.Role)
	case hasID:
		// An answer: to a request that went the other way.
		r.Role = "response"
		if len(p.Error) > 0 && string(p.Error) != "null" {
			r.Role = "error"
		}
		other := "in"
		if r.Dir == "in" {
			other = "out"
		}
		req, ok := c.answer(other, r.ID, r)
		if ok {
			r.Method, r.Session = req.method, req.session
		}
		if r.Session == "" {
			r.Session = p.Result.SessionID
		}
		if r.Role == "response" {
			r.check = checkACP(r.Method, "response")
		}
	default:
		r.Role = "notification"
	}
}

// expect notes that a request went (dir) with id, awaiting its answer.
func (c *Conn) expect(dir, id string, r *Record) {
	key := dir + "\x00" + id
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[key]; !ok {
		c.order = append(c.order, key)
	}
	c.pending[key] = pending{req: r, method: r.Method, session: r.Session}
	for len(c.order) > maxPending {
		delete(c.pending, c.order[0])
		c.order = c.order[1:]
	}
}

// answer pairs r with the request (dir, id) and forgets it.
func (c *Conn) answer(dir, id string, r *Record) (pending, bool) {
	key := dir + "\x00" + id
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[key]
	if !ok {
		return p, false
	}
	delete(c.pending, key) // its key stays in order until it comes first
	r.Pair = p.req.Seq
	r.Ms = float64(r.At.Sub(p.req.At).Microseconds()) / 1000
	return p, true
}

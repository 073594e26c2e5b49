package acpserver

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/boundlog"
)

// lockedBuffer is a log that goroutines may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An update no connection is to receive (a prompt's own text, told only
// to the session's other clients, when it has none) is not encoded: a
// long prompt is not copied into a notification for nobody. An update
// that cannot be encoded shows whether it was.
func TestUpdateForNobodyIsNotEncoded(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"ok"}]}]}`, "allow")
	log := &lockedBuffer{}
	ta.a.opts.Log = log
	ta.a.log = boundlog.NewAsync(log, 0)
	cl := ta.connect()
	cl.init()
	s := ta.a.lookup(cl.newSession(t.TempDir()))
	// The session reaches its client from the step that follows its
	// answer on the connection, before the connection's next request is
	// read: once a later request is answered, the client is its client.
	cl.must(acp.MethodZotStatus, nil, nil)
	s.mu.Lock()
	only := s.clients[0]
	s.mu.Unlock()
	s.push(item{note: make(chan int), except: only}) // for the other clients: none
	ta.a.log.Flush()
	if strings.Contains(log.String(), "encoding an update") {
		t.Fatalf("an update for nobody was encoded:\n%s", log)
	}
	s.push(item{note: make(chan int)}) // for every client: encoded, and fails
	ta.a.log.Flush()
	if !strings.Contains(log.String(), "encoding an update") {
		t.Fatalf("an update for the session's client was not encoded:\n%s", log)
	}
}

package acpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
)

// A tap on an in-process ACP connection sees every message of a session
// (initialize, session/new, a prompt with its updates, the permission
// request and its answer), each once, in the order of the wire: what the
// client sent is what the agent read, and what the agent wrote is what
// the client read.
func TestTapSeesEveryMessageOfASession(t *testing.T) {
	ta := newTestAgent(t, "", writeScript, PermissionAsk)
	agentSide, clientSide := &jsonrpc.Recorder{}, &jsonrpc.Recorder{}
	ta.agentTap, ta.clientTap = agentSide.Record, clientSide.Record
	cl := ta.connect()
	cl.init()
	id := cl.newSession(ta.dir)
	if stop, err := cl.prompt(id, "write the file"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	// A frame the agent wrote after the answer (none is expected) would
	// be on its way: wait until each end has seen as many messages each
	// way as the other sent.
	waitFor(t, "both ends to have seen the same messages", func() bool {
		agent, _ := agentSide.Traffic()
		client, _ := clientSide.Traffic()
		return len(messages(agent, jsonrpc.Out)) == len(messages(client, jsonrpc.In)) &&
			len(messages(agent, jsonrpc.In)) == len(messages(client, jsonrpc.Out))
	})
	cl.mu.Lock()
	asked := len(cl.asked)
	cl.mu.Unlock()
	if asked != 1 {
		t.Fatalf("%d permission requests, want 1", asked)
	}

	agent, dropped := agentSide.Traffic()
	client, _ := clientSide.Traffic()
	if dropped != 0 {
		t.Fatalf("a recorder without Max let %d messages go", dropped)
	}
	// Each end saw the same messages the other way round, in order.
	if got, want := messages(client, jsonrpc.Out), messages(agent, jsonrpc.In); !equal(got, want) {
		t.Errorf("the client wrote\n%s\nthe agent read\n%s", join(got), join(want))
	}
	if got, want := messages(agent, jsonrpc.Out), messages(client, jsonrpc.In); !equal(got, want) {
		t.Errorf("the agent wrote\n%s\nthe client read\n%s", join(got), join(want))
	}
	// Each message is seen when it passes, times in order per direction.
	for _, side := range [][]jsonrpc.Traffic{agent, client} {
		last := map[jsonrpc.Direction]int64{}
		for _, tr := range side {
			if at := tr.At.UnixNano(); at < last[tr.Dir] {
				t.Errorf("%s message %s seen before the one before it", tr.Dir, tr.Message)
			} else {
				last[tr.Dir] = at
			}
		}
	}
	// What the agent read and wrote is the session, message by message.
	var in, notes, answers, calls int
	methods := map[string]int{}
	for _, tr := range agent {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(tr.Message, &m); err != nil {
			t.Fatalf("%s message is not JSON: %s", tr.Dir, tr.Message)
		}
		switch {
		case tr.Dir == jsonrpc.In && m.Method != "":
			in++
			methods[m.Method]++
		case tr.Dir == jsonrpc.In:
			answers++ // the client's answer to the permission request
		case m.Method == acp.MethodSessionUpdate:
			notes++
		case m.Method != "":
			calls++
			methods[m.Method]++
		}
	}
	if in != 3 || methods[acp.MethodInitialize] != 1 || methods[acp.MethodSessionNew] != 1 || methods[acp.MethodSessionPrompt] != 1 {
		t.Errorf("the agent read requests %v, want initialize, session/new, session/prompt once each", methods)
	}
	if calls != 1 || methods[acp.MethodSessionRequestPermission] != 1 || answers != 1 {
		t.Errorf("the agent made %d calls (%v) and read %d answers; want one permission request and its answer", calls, methods, answers)
	}
	// The client handles a message just after its tap saw it.
	waitFor(t, fmt.Sprintf("the client to handle the %d session/update notifications the tap saw", notes), func() bool {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		return len(cl.updates) == notes
	})
}

// messages returns the messages of one direction.
func messages(tr []jsonrpc.Traffic, dir jsonrpc.Direction) [][]byte {
	var out [][]byte
	for _, x := range tr {
		if x.Dir == dir {
			out = append(out, x.Message)
		}
	}
	return out
}

func equal(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func join(ms [][]byte) string { return string(bytes.Join(ms, []byte("\n"))) }

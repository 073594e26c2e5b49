package main

// Tests of the ACP methods through the real binary: zot acp over stdin
// and stdout, zot daemon over its socket, every frame both ways checked
// against the vendored ACP schema and the daemon's, and a daemon killed
// with SIGKILL mid-turn whose sessions load again with every committed
// message.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// acpPeer is a doorPeer, whose every frame is checked against the
// schema (doorPeer.send and next), with the helpers of an ACP client.
type acpPeer struct {
	*doorPeer
}

// checked wraps dp. dp checks every frame it sends or reads already, and
// reports the problems when the test ends: a second check of each frame
// would double the cost of the tests that move tens of MiB.
func checked(_ *testing.T, dp *doorPeer) *acpPeer {
	return &acpPeer{doorPeer: dp}
}

// await returns the answer to id and the frames before it. A permission
// request among them is answered with option (allow_once, …).
func (p *acpPeer) await(id, option string) (doorFrame, []doorFrame) {
	p.t.Helper()
	var before []doorFrame
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == id {
			return f, before
		}
		if f.Method == "session/request_permission" {
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, f.ID, option))
		}
		before = append(before, f)
	}
}

// call sends a request and returns its answer and what came before.
func (p *acpPeer) call(id, method, params, option string) (doorFrame, []doorFrame) {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	return p.await(id, option)
}

// updateKinds lists the sessionUpdate of each session/update frame.
func updateKinds(frames []doorFrame) []string {
	var out []string
	for _, f := range frames {
		if f.Method != "session/update" {
			continue
		}
		var p struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Status  string `json:"status"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		_ = json.Unmarshal(f.Params, &p)
		k := p.Update.Kind
		if p.Update.Status != "" {
			k += ":" + p.Update.Status
		}
		out = append(out, k)
	}
	return out
}

// chunkText joins the text of the updates of one kind.
func chunkText(frames []doorFrame, kind string) string {
	var b strings.Builder
	for _, f := range frames {
		var p struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		if f.Method == "session/update" && json.Unmarshal(f.Params, &p) == nil && p.Update.Kind == kind {
			b.WriteString(p.Update.Content.Text)
		}
	}
	return b.String()
}

// toolStatusInMode initializes p, opens a session with the session/new
// params newParams, sets its mode and prompts "go" (id 4). It returns the
// final status (completed, failed) of each tool call of the turn, by call
// id, and the ids of the calls zot asked permission for, each allowed
// once. stderr is zot's, shown when the prompt fails.
func toolStatusInMode(t *testing.T, p *acpPeer, stderr fmt.Stringer, newParams, mode string) (status map[string]string, asked []string) {
	t.Helper()
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
	f, _ := p.call("2", "session/new", newParams, "")
	id := sessionID(t, f)
	if f, _ := p.call("3", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":%q}`, id, mode), ""); f.Error != nil {
		t.Fatalf("set_mode: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	var before []doorFrame
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == "4" {
			if f.Error != nil {
				t.Fatalf("prompt: %s\n%s", f.raw, stderr)
			}
			break
		}
		if f.Method == "session/request_permission" {
			var q struct {
				ToolCall struct{ ToolCallID string } `json:"toolCall"`
			}
			_ = json.Unmarshal(f.Params, &q)
			asked = append(asked, q.ToolCall.ToolCallID)
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`, f.ID))
		}
		before = append(before, f)
	}
	status = map[string]string{}
	for _, u := range updates(before) {
		if u["sessionUpdate"] == "tool_call_update" && (u["status"] == "completed" || u["status"] == "failed") {
			status[fmt.Sprint(u["toolCallId"])] = fmt.Sprint(u["status"])
		}
	}
	return status, asked
}

// sessionID reads the sessionId of a session/new answer.
func sessionID(t *testing.T, f doorFrame) string {
	t.Helper()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.SessionID == "" {
		t.Fatalf("session/new: %s", f.raw)
	}
	return r.SessionID
}

func TestACPStdioPromptWithPermission(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "Writing.", "tool_calls": []any{map[string]any{"id": "w1", "name": "write", "args": map[string]any{"path": "a.txt", "content": "hi\n"}}}},
		map[string]any{"text": "Done."},
	}}}})
	a := startACPProc(t, home, "--provider", "scripted", "--script", s)
	cmd, stdin, stderr, p := a.cmd, a.stdin, a.stderr, a.peer

	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)
	// --permission defaults to ask: the write waits for the client.
	f, before := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"write"}]}`, id), "allow_once")
	if f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	asked := false
	for _, fr := range before {
		asked = asked || fr.Method == "session/request_permission"
	}
	if !asked {
		t.Error("no session/request_permission before the write")
	}
	// The title (session_info_update) is queued by the prompt's handler
	// beside the turn's first updates, so it may fall among them.
	kinds := slices.DeleteFunc(updateKinds(before), func(k string) bool { return k == "session_info_update" })
	got := strings.Join(kinds, " ")
	if !strings.Contains(got, "tool_call:pending tool_call_update:in_progress tool_call_update:completed") {
		t.Errorf("updates %s", got)
	}
	if b, err := os.ReadFile(filepath.Join(work, "a.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("a.txt: %q %v", b, err)
	}
	if f, _ := p.call("4", "_zot/status", `{}`, ""); f.Error != nil || !strings.Contains(string(f.Result), id) {
		t.Errorf("_zot/status: %s", f.raw)
	}
	stdin.Close()
	if err := endOf(t, cmd, stderr); err != nil {
		t.Errorf("zot acp at the end of stdin: %v\n%s", err, stderr)
	}
}

func TestACPDaemonKilledMidTurnLosesNoCommittedMessage(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "s")
	work := t.TempDir()
	// Turn 1 reads a file and answers; turn 2 answers slowly, and the
	// daemon is killed in its middle.
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "r1", "name": "ls", "args": map[string]any{"path": "."}}}},
			map[string]any{"text": "First answer."},
		}},
		map[string]any{"steps": []any{map[string]any{"text": "a slow second answer that never ends in time", "chunk": 2, "delay_ms": 50}}},
	}})
	env := doorEnv(home, "ZOT_SOCKET="+sock)
	d := startZotDaemon(t, env, "--script", s)
	d.waitFor(t, "listening on")
	conn, c := dialDoor(t, sock)
	p := checked(t, conn)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	if f, _ := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"look"}]}`, id), ""); f.Error != nil {
		t.Fatalf("prompt 1: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}}`, id))
	for {
		f := p.next()
		if f.Method == "session/update" && strings.Contains(string(f.Params), "agent_message_chunk") {
			break
		}
	}
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.waitExit(t)
	c.Close()

	d2 := startZotDaemon(t, env, "--script", s)
	d2.waitFor(t, "listening on")
	conn2, _ := dialDoor(t, sock)
	p2 := checked(t, conn2)
	p2.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, before := p2.call("2", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, work), "")
	if f.Error != nil {
		t.Fatalf("load after SIGKILL: %s\n%s", f.raw, d2.stderr)
	}
	// Everything of turn 1, and the user message of turn 2, which was
	// committed before the kill.
	if got := chunkText(before, "user_message_chunk"); got != "lookagain" {
		t.Errorf("replayed user text %q, want %q", got, "lookagain")
	}
	if got := chunkText(before, "agent_message_chunk"); got != "First answer." {
		t.Errorf("replayed agent text %q", got)
	}
	kinds := strings.Join(updateKinds(before), " ")
	if !strings.Contains(kinds, "tool_call:pending tool_call_update:completed") {
		t.Errorf("replayed updates %s", kinds)
	}
	// The session goes on.
	f, _ = p2.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"and now"}]}`, id), "")
	if f.Error != nil {
		t.Errorf("prompt after load: %s", f.raw)
	}
}

// first returns its first argument.
func first(f doorFrame, _ []doorFrame) doorFrame { return f }

func TestACPDaemonHundredSessionsStreamAtOnce(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "s")
	// 60 numbered words in 4-byte chunks: a lost, doubled or reordered
	// update changes a session's text.
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("%03d", i))
	}
	answer := strings.Join(words, " ")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": answer, "chunk": 4}}}}})
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock), "--script", s)
	d.waitFor(t, "listening on")
	work := t.TempDir()
	const conns, perConn = 4, 25
	var wg sync.WaitGroup
	for c := range conns {
		dp, _ := dialDoor(t, sock)
		p := checked(t, dp)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.call("0", "initialize", `{"protocolVersion":1}`, "")
			ids := make([]string, perConn)
			for i := range ids {
				ids[i] = sessionID(t, first(p.call(fmt.Sprint(i+1), "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
			}
			// Every prompt at once, then read until every one is answered.
			for i, id := range ids {
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"count"}]}}`, i, id))
			}
			text := map[string]*strings.Builder{}
			for _, id := range ids {
				text[id] = new(strings.Builder)
			}
			for answered := 0; answered < perConn; {
				f := p.next()
				switch {
				case f.Method == "session/update":
					var u struct {
						SessionID string `json:"sessionId"`
						Update    struct {
							Kind    string `json:"sessionUpdate"`
							Content struct {
								Text string `json:"text"`
							} `json:"content"`
						} `json:"update"`
					}
					_ = json.Unmarshal(f.Params, &u)
					if u.Update.Kind == "agent_message_chunk" {
						text[u.SessionID].WriteString(u.Update.Content.Text)
					}
				case f.Method == "":
					var i int
					if _, err := fmt.Sscanf(strings.Trim(string(f.ID), `"`), "p%d", &i); err != nil || f.Error != nil {
						t.Errorf("connection %d: %s", c, f.raw)
						answered++
						continue
					}
					// Every update of the turn came before its answer.
					if got := text[ids[i]].String(); got != answer {
						t.Errorf("connection %d session %d: %d bytes of text before the answer, want %d", c, i, len(got), len(answer))
					}
					answered++
				}
			}
		}()
	}
	wg.Wait()
}

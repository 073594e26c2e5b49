package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// What a call leaves behind, in order, is what these tests rely on: its
// events, posted as they come and all delivered to the relay, and its
// output's blobs (the transcript, a tool's result) synced, the two
// alongside; then one synced record of the output under the call's place
// in the turn; then, for a step that ends the turn, the end posted to
// the relay; then the report to the cluster. A worker killed before the
// record leaves no record: a model call is made again (its events carry
// the same numbers, so the client sees them once), a tool call is
// answered interrupted, never run again. Killed after it, the next
// attempt returns the record without emitting or paying anything, and
// the client already has the call's events. A client that has the end
// answers with it; one that does not (its daemon killed, the post lost)
// waits for the workflow, whose output after that step is the same.

// slowAnswer is a model that answers text word by word, delay apart.
func slowAnswer(text string, delay time.Duration) func(modelRequest) []answerPart {
	return func(modelRequest) []answerPart { return []answerPart{{Text: text, Delay: delay}} }
}

const longText = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty."

// promptAsync prompts in the background; the returned function waits for
// the answer.
func promptAsync(t *testing.T, c *acpClient, session, text string) func() json.RawMessage {
	var res json.RawMessage
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err = c.try("session/prompt", map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}()
	return func() json.RawMessage {
		wg.Wait()
		if err != nil {
			t.Fatalf("session/prompt: %v", err)
		}
		return res
	}
}

// firstChunk returns a channel closed at the first agent_message_chunk.
func firstChunk(c *acpClient) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	c.mu.Lock()
	c.onUpdate = func(u json.RawMessage) {
		if strings.Contains(string(u), `"agent_message_chunk"`) {
			once.Do(func() { close(ch) })
		}
	}
	c.mu.Unlock()
	return ch
}

func waitChan(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hang):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestFleetWorkerKilledMidModelCall: kill -9 of the worker streaming a
// model call. The call is made again on the other worker, the client
// sees what the kill cut, a note that the call is made again, then the
// answer once, and only the call that was cut is paid again.
func TestFleetWorkerKilledMidModelCall(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	w1 := f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	c.taken()
	chunk := firstChunk(c)
	wait := promptAsync(t, c, s, "count")
	waitChan(t, "the first chunk", chunk)
	f.worker("w2")
	w1.kill()
	res := wait()
	if !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	// The part the kill cut, a note that the call is made again, then
	// the answer whole, once, as a message of its own.
	seen := splitAttempts(t, c.taken())
	if seen.before == "" || !strings.HasPrefix(longText, seen.before) || seen.after != longText {
		t.Errorf("the client saw %q, then the note, then %q; want a beginning of the answer, then the answer once: %q", seen.before, seen.after, longText)
	}
	if n := f.model.count(0); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (the call the kill cut, then its retry)", n)
	}
}

// TestFleetWorkerKilledMidToolCall: kill -9 of the worker running bash.
// The call is not run again: the model is told it was interrupted, and
// the command's side effect happened once; the model call that asked
// for it, finished before the kill, is not paid again.
func TestFleetWorkerKilledMidToolCall(t *testing.T) {
	marks := "marks.txt"
	f := newFleet(t, toolThenAnswer("echo $$ > pid.txt; echo start >> "+marks+"; sleep 20; echo end >> "+marks, 0))
	w1 := f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	s := c.newSession(work)
	t.Cleanup(func() {
		// The killed worker's shell outlives it (a process group of its
		// own, as kill -9 of a host would not leave it).
		if b, err := os.ReadFile(filepath.Join(work, "pid.txt")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	wait := promptAsync(t, c, s, "run it")
	wait2 := func() bool {
		b, _ := os.ReadFile(filepath.Join(work, marks))
		return strings.Contains(string(b), "start")
	}
	deadline := time.Now().Add(hang)
	for !wait2() {
		if time.Now().After(deadline) {
			t.Fatal("bash never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.worker("w2")
	w1.kill()
	res := wait()
	if !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	var result string
	for _, u := range c.taken() {
		if strings.Contains(string(u), `"tool_call_update"`) && strings.Contains(string(u), `"completed"`) || strings.Contains(string(u), `"failed"`) {
			result = string(u)
		}
	}
	if !strings.Contains(result, "interrupted") {
		t.Errorf("the tool call's end, %s, does not say it was interrupted", result)
	}
	b, _ := os.ReadFile(filepath.Join(work, marks))
	if n := strings.Count(string(b), "start"); n != 1 {
		t.Errorf("bash started %d times (%q), want once", n, b)
	}
	if n0, n1 := f.model.count(0), f.model.count(1); n0 != 1 || n1 != 1 {
		t.Errorf("model requests: %d before the tool and %d after, want 1 and 1", n0, n1)
	}
}

// TestFleetServerDown: the dev server (its state in a file) is killed
// for 10 s while a model call streams; the turn then finishes and the
// client sees the answer once.
func TestFleetServerDown(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	c.taken()
	chunk := firstChunk(c)
	wait := promptAsync(t, c, s, "count")
	waitChan(t, "the first chunk", chunk)
	f.server.kill()
	time.Sleep(10 * time.Second)
	f.startServer()
	res := wait()
	if !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	if got := text(c.taken()); got != longText {
		t.Errorf("the client saw %q, want the answer once: %q", got, longText)
	}
	if n := f.model.count(0); n != 1 {
		t.Errorf("the model was asked %d times, want once: the call finished while the server was away", n)
	}
}

// TestFleetDaemonKilledMidTurn: kill -9 of the daemon (and the client it
// started) mid-answer. The turn finishes in the fleet; a daemon started
// again shows all of it to a client that loads the session.
func TestFleetDaemonKilledMidTurn(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	f.worker("w1")
	d, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	chunk := firstChunk(c)
	_ = promptAsync(t, c, s, "count")
	waitChan(t, "the first chunk", chunk)
	d.kill()
	_ = os.Remove(sock)
	_, sock = f.daemon("d2", false)
	c2 := dialACP(t, sock)
	c2.call("session/load", map[string]any{"sessionId": s, "cwd": f.dir, "mcpServers": []any{}})
	if got := text(c2.taken()); got != longText {
		t.Errorf("session/load after the restart shows %q, want the whole answer %q", got, longText)
	}
	if n := f.model.count(0); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
}

// TestFleetCancel: session/cancel mid-answer ends the turn cancelled
// through the workflow's abort signal, and the session takes the next
// prompt.
func TestFleetCancel(t *testing.T) {
	f := newFleet(t, slowAnswer(longText, 100*time.Millisecond))
	f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	chunk := firstChunk(c)
	wait := promptAsync(t, c, s, "count")
	waitChan(t, "the first chunk", chunk)
	start := time.Now()
	c.notify("session/cancel", map[string]any{"sessionId": s})
	res := wait()
	if !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("the cancelled prompt answered %s", res)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the cancel took %v to end the turn", took)
	}
	c.mu.Lock()
	c.onUpdate = nil
	c.mu.Unlock()
	c.taken()
	if res := c.prompt(s, "again"); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("the next prompt answered %s", res)
	}
	if got := text(c.taken()); got != longText {
		t.Errorf("the next prompt's answer: %q", got)
	}
}

// TestFleetWorkerKilledMidAnswerThatDiffers: kill -9 of the worker
// streaming a model call whose second answer, made on the other worker,
// differs from the first (as a real model's does). The client sees the
// cut-off part, then a note that the call is made again (attempt 2), then
// the second answer whole, as a message of its own (a messageId), never
// the first's beginning glued to the second's end; the session keeps
// the second answer only, and its usage counts the call that finished,
// not the one cut off.
func TestFleetWorkerKilledMidAnswerThatDiffers(t *testing.T) {
	const second = "A different answer, and a complete one."
	var asked atomic.Int32
	f := newFleet(t, func(modelRequest) []answerPart {
		if asked.Add(1) == 1 {
			return []answerPart{{Text: longText, Delay: 100 * time.Millisecond}}
		}
		return []answerPart{{Text: second}}
	})
	w1 := f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	c.taken()
	chunk := firstChunk(c)
	wait := promptAsync(t, c, s, "count")
	waitChan(t, "the first chunk", chunk)
	f.worker("w2")
	w1.kill()
	res := wait()

	var ans struct {
		StopReason string `json:"stopReason"`
		Meta       struct {
			Zot struct {
				Result struct {
					Text  string `json:"text"`
					Turns int    `json:"turns"`
					Usage struct {
						Input  int `json:"input"`
						Output int `json:"output"`
					} `json:"usage"`
				} `json:"result"`
			} `json:"zot"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &ans); err != nil || ans.StopReason != "end_turn" {
		t.Fatalf("prompt answered %s (%v)", res, err)
	}
	r := ans.Meta.Zot.Result
	if r.Text != second || r.Turns != 1 {
		t.Errorf("the prompt's record: text %q, %d turns; want %q in 1 turn", r.Text, r.Turns, second)
	}
	// One call's usage (the fake model reports 10 in, 5 out), not two.
	if r.Usage.Input != 10 || r.Usage.Output != 5 {
		t.Errorf("the prompt's usage: %d in, %d out; want the finished call's only: 10 and 5", r.Usage.Input, r.Usage.Output)
	}

	updates := c.taken()
	seen := splitAttempts(t, updates)
	if seen.before == "" || !strings.HasPrefix(longText, seen.before) {
		t.Errorf("before the note the client saw %q, want a beginning of the first answer", seen.before)
	}
	if seen.after != second {
		t.Errorf("after the note the client saw %q, want the second answer whole: %q", seen.after, second)
	}
	var tokens map[string]any
	for _, u := range updates {
		var m struct {
			Kind string `json:"sessionUpdate"`
			Meta struct {
				Zot map[string]any `json:"zot"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(u, &m)
		if m.Kind == "usage_update" {
			tokens, _ = m.Meta.Zot["tokens"].(map[string]any)
		}
	}
	if tokens["input"] != float64(10) || tokens["output"] != float64(5) {
		t.Errorf("the session's tokens after the turn: %v, want the finished call's only (10 in, 5 out)", tokens)
	}
	if n := f.model.count(0); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (the call the kill cut, then its retry)", n)
	}
	c2 := dialACP(t, sock)
	c2.call("session/load", map[string]any{"sessionId": s, "cwd": f.dir, "mcpServers": []any{}})
	if got := text(c2.taken()); got != second {
		t.Errorf("session/load shows %q, want the second answer only: %q", got, second)
	}
}

// attempts is what a client saw of an answer whose model call was made
// again: the text before the note that says so, and after it.
type attempts struct{ before, after string }

// splitAttempts reads the agent_message_chunk updates of a turn with one
// model call made again: the first attempt's chunks (no messageId), one
// note (_meta.zot.attempt 2, for display), then the second attempt's
// chunks, all with one messageId.
func splitAttempts(t *testing.T, updates []json.RawMessage) attempts {
	t.Helper()
	var before, after strings.Builder
	notes, ids := 0, map[string]bool{}
	for _, u := range updates {
		var m struct {
			Kind      string `json:"sessionUpdate"`
			MessageID string `json:"messageId"`
			Content   struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta struct {
				Zot map[string]any `json:"zot"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(u, &m)
		switch {
		case m.Kind != "agent_message_chunk":
		case m.Meta.Zot["attempt"] != nil:
			notes++
			if m.Meta.Zot["attempt"] != float64(2) || m.Meta.Zot["action"] != "display" || m.MessageID != "" {
				t.Errorf("the note of the call made again: %s", u)
			}
		case notes == 0:
			if m.MessageID != "" {
				t.Errorf("a chunk of the first attempt has messageId %q", m.MessageID)
			}
			before.WriteString(m.Content.Text)
		default:
			ids[m.MessageID] = true
			after.WriteString(m.Content.Text)
		}
	}
	if notes != 1 || len(ids) != 1 || ids[""] {
		t.Fatalf("%d notes of a call made again and the messageIds %v after it; want one note, then one message with an id; the client saw %q", notes, ids, text(updates))
	}
	return attempts{before.String(), after.String()}
}

// TestFleetDaemonKilledMidToolCall: kill -9 of the daemon (and its
// client) while the turn's first bash runs, in a turn of model, bash,
// model, bash, model. The daemon started again points the turn at itself
// when the session is loaded: the second bash passes the session's
// interceptors there and, its mode letting bash run, runs once; the
// turn finishes, session/load shows all of it, and nothing is run or
// paid twice.
func TestFleetDaemonKilledMidToolCall(t *testing.T) {
	daemonKilledMidToolCall(t, "allow", "start1\nend1\ntwo\n", "")
}

// TestFleetDaemonKilledMidToolCallAsks: as above, with a daemon started
// again in a mode that asks a person before bash: no client holds the
// session while it opens, so the second bash is refused as with no
// client to answer (not left waiting), and the turn still finishes.
func TestFleetDaemonKilledMidToolCallAsks(t *testing.T) {
	daemonKilledMidToolCall(t, "ask", "start1\nend1\n", "no answer can come")
}

// daemonKilledMidToolCall runs the turn above with the daemon started
// again with --permission perm: the commands leave marks, and the
// second bash's result holds refusal ("" for none).
func daemonKilledMidToolCall(t *testing.T, perm, marksWant, refusal string) {
	bash := func(cmd string) string {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return string(b)
	}
	const final = "Both commands ran."
	f := newFleet(t, func(r modelRequest) []answerPart {
		switch r.Results {
		case 0:
			return []answerPart{{Text: "First. "}, {Tool: "bash", Args: bash("echo start1 >> marks.txt; while [ ! -e go ]; do sleep 0.1; done; echo end1 >> marks.txt")}}
		case 1:
			return []answerPart{{Text: "Second. "}, {Tool: "bash", Args: bash("echo two >> marks.txt")}}
		}
		return []answerPart{{Text: final}}
	})
	f.worker("w1")
	d, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	marks := filepath.Join(work, "marks.txt")
	read := func() string { b, _ := os.ReadFile(marks); return string(b) }
	s := c.newSession(work)
	_ = promptAsync(t, c, s, "run both")
	deadline := time.Now().Add(hang)
	for !strings.Contains(read(), "start1") {
		if time.Now().After(deadline) {
			t.Fatal("the first bash never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.kill()
	_ = os.Remove(sock)
	_, sock = f.daemonAs("d2", false, perm)
	c2 := dialACP(t, sock)
	// The first bash ends once the daemon started again has had time to
	// point the turn at itself (the load waits for the turn's end).
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(3 * time.Second)
		_ = os.WriteFile(filepath.Join(work, "go"), nil, 0o600)
	}()
	c2.call("session/load", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}})
	<-released
	if got := read(); got != marksWant {
		t.Errorf("the commands left %q, want %q", got, marksWant)
	}
	seen := c2.taken()
	if refusal != "" && !strings.Contains(fmt.Sprintf("%s", seen), refusal) {
		t.Errorf("session/load does not show the second bash refused with %q:\n%s", refusal, seen)
	}
	if got := text(seen); !strings.Contains(got, final) {
		t.Errorf("session/load after the restart shows %q, want the turn's last answer %q", got, final)
	}
	calls := 0
	for _, u := range seen {
		if strings.Contains(string(u), `"tool_call"`) && strings.Contains(string(u), `"sessionUpdate"`) && !strings.Contains(string(u), `"tool_call_update"`) {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("session/load shows %d tool calls, want 2:\n%s", calls, seen)
	}
	for results := 0; results <= 2; results++ {
		if n := f.model.count(results); n != 1 {
			t.Errorf("the model call after %d tool results was made %d times, want once", results, n)
		}
	}
}

package rpcclient

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk/wire"
)

func TestLargeImagePrompt(t *testing.T) {
	const size = 10 << 20
	png := make([]byte, size)
	copy(png, "\x89PNG\r\n\x1a\n")
	c := startZot(t, nil)
	s, err := c.PromptStream(ctx(t), "what is in this picture?", []wire.ImageInput{{MIMEType: "image/png", Data: base64.StdEncoding.EncodeToString(png)}})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s)
	um := evs[0].(*wire.UserMessageEvent)
	if len(um.Content) != 2 {
		t.Fatalf("user message content %v", um.Content)
	}
	img, ok := um.Content[1].(*wire.ImageBlock)
	if !ok || img.MIMEType != "image/png" || img.Bytes != size {
		t.Errorf("image block %+v", um.Content[1])
	}
	msgs, err := c.Messages(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if img, ok := msgs[0].Content[1].(*wire.ImageBlock); !ok || img.Bytes != size {
		t.Errorf("transcript image %+v", msgs[0].Content[1])
	}
}

func TestQueuedPrompt(t *testing.T) {
	c := startZot(t, nil, "--script", writeScript(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "the first answer, slowly", "chunk": 2, "delay_ms": 20}}},
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}}))
	first, err := c.PromptStream(ctx(t), "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.PromptStream(ctx(t), "second", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Start.Started {
		t.Errorf("first start %+v", first.Start)
	}
	if second.Start.Started || second.Start.Queued == nil || !*second.Start.Queued || second.Start.Position == nil || *second.Start.Position != 1 {
		t.Errorf("second start %+v, want queued at position 1", second.Start)
	}
	if st, err := c.State(ctx(t)); err != nil || st.Queued == nil || *st.Queued != 1 {
		t.Errorf("state while one waits: %+v, %v", st, err)
	}
	// Read the second stream first: the first one's events wait buffered.
	b := collect(t, second)
	a := collect(t, first)
	if got := text(a); got != "the first answer, slowly" {
		t.Errorf("first answer %q", got)
	}
	if got := text(b); got != "You said: second" {
		t.Errorf("second answer %q", got)
	}
	if a[len(a)-1].GetSeq() >= b[0].GetSeq() {
		t.Error("the queued prompt started before the first one's done")
	}
}

func TestAbortMidTool(t *testing.T) {
	c := startZot(t, nil, "--script", writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "sleep 30"}}}},
		map[string]any{"text": "never reached"},
	}}}}))
	s, err := c.PromptStream(ctx(t), "sleep", nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []wire.Event
	for ev, err := range s.All(ctx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		// The tool runs after the step's turn_end with stop tool_use.
		if te, ok := ev.(*wire.TurnEndEvent); ok && te.Stop == wire.StopToolUse {
			ab, err := c.Abort(ctx(t), false)
			if err != nil || !ab.Aborted {
				t.Fatalf("abort: %+v, %v", ab, err)
			}
		}
	}
	n := len(evs)
	if n < 2 || evs[n-1].Type() != wire.TypeDoneEvent {
		t.Fatalf("events %v", types(evs))
	}
	if te, ok := evs[n-2].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
		t.Fatalf("abort did not end with turn_end aborted then done: %v", types(evs))
	}
	for _, e := range evs {
		if e.Type() == wire.TypeErrorEvent || e.Type() == wire.TypeTextDeltaEvent {
			t.Errorf("%s after an abort: %v", e.Type(), types(evs))
		}
	}
	if res, ok := find[*wire.ToolResultEvent](evs); !ok || !res.IsError {
		t.Errorf("aborted tool result %+v", res)
	}
	if st, err := c.State(ctx(t)); err != nil || st.Busy {
		t.Errorf("state after abort %+v, %v", st, err)
	}
}

func TestAbortAllDropsTheQueue(t *testing.T) {
	c := startZot(t, nil, "--script", writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "slow slow slow slow", "chunk": 1, "delay_ms": 50},
	}}}}))
	var streams []*Stream
	for _, msg := range []string{"one", "two", "three"} {
		s, err := c.PromptStream(ctx(t), msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	ab, err := c.Abort(ctx(t), true)
	if err != nil || !ab.Aborted || ab.Dropped != 2 {
		t.Fatalf("abort all: %+v, %v", ab, err)
	}
	for _, s := range streams {
		evs := collect(t, s)
		if te, ok := evs[len(evs)-2].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
			t.Errorf("stream %s: %v", s.ID, types(evs))
		}
	}
}

func TestCloseStopsRunningWork(t *testing.T) {
	stderr := &zotbin.Buffer{}
	// A short sleep: should zot be killed, the tool outlives it briefly.
	script := writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "sleep 5"}}}},
		map[string]any{"text": "slept"},
	}}}})
	c, err := Start(ctx(t), Options{
		Bin:          zotBin,
		Args:         []string{"--provider", "scripted", "--cwd", t.TempDir(), "--script", script},
		Env:          cleanEnv(),
		Stderr:       stderr,
		CloseTimeout: 1, // do not wait for the tool: go straight to SIGTERM
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.PromptStream(ctx(t), "sleep", nil)
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range s.All(ctx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type() == wire.TypeToolCallEvent {
			break
		}
	}
	// zot would finish the tool first: Close signals it instead (and
	// kills it if it does not exit after SIGTERM either).
	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "did not exit within") {
		t.Errorf("close of a busy zot: %v (stderr %s)", err, stderr)
	}
	t.Logf("close of a busy zot: %v", err)
	select {
	case <-c.Done():
	default:
		t.Error("Close returned before the output was read to its end")
	}
	// The stream ended one way or the other: done, or the exit.
	if _, err := s.Collect(ctx(t)); err != nil && !strings.Contains(err.Error(), "exited") {
		t.Errorf("stream after close: %v", err)
	}
	if err := c.Ping(ctx(t)); err == nil {
		t.Error("ping after close succeeded")
	}
}

func TestStdoutCarriesOnlyJSON(t *testing.T) {
	cmd := exec.Command(zotBin, "rpc", "--provider", "scripted", "--cwd", t.TempDir())
	cmd.Env = cleanEnv()
	var in bytes.Buffer
	for _, c := range []string{
		`{"id":1,"type":"prompt","message":"run the tool"}`,
		`{"id":"2","type":"get_state"}`,
		`{"id":3,"type":"get_messages"}`,
		`{"id":4,"type":"no_such_command"}`,
		`{"id":5,"type":"prompt","message":"a` + "\u2028" + `b"}`,
		`{"id":6,"type":"compact"}`,
		`{not json`,
	} {
		in.WriteString(c + "\n")
	}
	cmd.Stdin = &in
	var stderr zotbin.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot rpc: %v; stderr %s", err, stderr.String())
	}
	var ids []string
	dones := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("stdout line is not a JSON object: %q", line)
		}
		resp, ev, err := wire.DecodeFrame(line)
		if err != nil {
			t.Fatalf("stdout line does not decode: %v: %q", err, line)
		}
		if resp != nil {
			ids = append(ids, resp.ID.String())
		} else if ev.Type() == wire.TypeDoneEvent {
			dones++
		}
	}
	if want := []string{`1`, `"2"`, `3`, `4`, `5`, `6`, ``}; strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("response ids %q, want %q", ids, want)
	}
	if dones != 3 {
		t.Errorf("%d done events, want 3", dones)
	}
}

package rpcclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

func TestPromptWithTools(t *testing.T) {
	c := startZot(t, nil)
	s, err := c.PromptStream(ctx(t), "list the files", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Start.Started || s.Start.Queued != nil {
		t.Errorf("start %+v, want started", s.Start)
	}
	evs := collect(t, s)
	um, ok := evs[0].(*wire.UserMessageEvent)
	if !ok || len(um.Content) != 1 || um.Content[0].(*wire.TextBlock).Text != "list the files" {
		t.Fatalf("first event %#v, want the user message", evs[0])
	}
	call, ok := find[*wire.ToolCallEvent](evs)
	var args map[string]string
	if !ok || call.Name != "bash" || json.Unmarshal(call.Args, &args) != nil || args["command"] != "echo hello from zot && ls" {
		t.Fatalf("tool call %+v in %v", call, types(evs))
	}
	res, ok := find[*wire.ToolResultEvent](evs)
	if !ok || res.ID != call.ID || res.IsError {
		t.Fatalf("tool result %+v", res)
	}
	if out, _ := json.Marshal(res.Content); !strings.Contains(string(out), "hello from zot") {
		t.Errorf("tool result content %s", out)
	}
	var stops []wire.StopReason
	var usage []*wire.UsageEvent
	for _, e := range evs {
		switch e := e.(type) {
		case *wire.TurnEndEvent:
			stops = append(stops, e.Stop)
		case *wire.UsageEvent:
			usage = append(usage, e)
		}
	}
	if !reflect.DeepEqual(stops, []wire.StopReason{wire.StopToolUse, wire.StopEndTurn}) {
		t.Errorf("stops %v", stops)
	}
	if len(usage) != 2 || usage[1].Cumulative.CostUSD <= 0 {
		t.Errorf("usage %+v", usage)
	}
	if text(evs) == "" {
		t.Error("no text")
	}

	s, err = c.PromptStream(ctx(t), "again", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(collect(t, s)); got != "You said: again" {
		t.Errorf("second prompt answered %q", got)
	}
}

func TestEveryCommand(t *testing.T) {
	c := startZot(t, nil)
	hello, err := c.Hello(ctx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if hello.ProtocolVersion != 1 || hello.Provider != "scripted" || hello.Model != "scripted" || hello.Version == "" {
		t.Errorf("hello %+v", hello)
	}
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	models, err := c.Models(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(models) == 0 || models[0].ID != "scripted" || models[0].Provider != "scripted" {
		t.Errorf("models %+v", models)
	}
	if err := c.SetModel(ctx(t), "scripted"); err != nil {
		t.Errorf("set_model: %v", err)
	}
	st, err := c.State(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Provider != "scripted" || st.Busy || st.MessageCount != 0 {
		t.Errorf("state %+v", st)
	}

	for _, msg := range []string{"one", "two"} {
		s, err := c.PromptStream(ctx(t), msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		collect(t, s)
	}
	msgs, err := c.Messages(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var roles []wire.Role
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	want := []wire.Role{"user", "assistant", "tool", "assistant", "user", "assistant"}
	if !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
	if st, _ = c.State(ctx(t)); st.MessageCount != int64(len(msgs)) || st.Usage.Input == 0 {
		t.Errorf("state after two prompts %+v", st)
	}

	// A third exchange gives compaction something to summarise beyond the
	// kept tail (which grows to keep a tool call with its result).
	s, err := c.PromptStream(ctx(t), "three", nil)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s)
	msgs, err = c.Messages(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err = c.CompactStream(ctx(t), "keep the file names")
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s)
	cd, ok := find[*wire.CompactDoneEvent](evs)
	if !ok || cd.Summary == "" {
		t.Fatalf("compaction: %v", types(evs))
	}
	if cd.MessagesBefore == nil || *cd.MessagesBefore != int64(len(msgs)) {
		t.Errorf("compact_done messages_before %v, want %d", cd.MessagesBefore, len(msgs))
	}
	if st, _ = c.State(ctx(t)); st.MessageCount >= int64(len(msgs)) {
		t.Errorf("compaction left %d of %d messages", st.MessageCount, len(msgs))
	}

	ab, err := c.Abort(ctx(t), false)
	if err != nil || ab.Aborted || ab.Dropped != 0 {
		t.Errorf("idle abort: %+v, %v", ab, err)
	}
	if err := c.Clear(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if st, _ = c.State(ctx(t)); st.MessageCount != 0 || st.Usage.Input != 0 {
		t.Errorf("state after clear %+v", st)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := c.Ping(ctx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("ping after close: %v", err)
	}
}

func TestErrorCodes(t *testing.T) {
	c := startZot(t, nil)
	err := c.SetModel(ctx(t), "")
	wantCode(t, err, wire.CodeUnknownModel, "set_model")
	err = c.AnswerPermission(ctx(t), "perm-1", wire.PermissionDecisionAllowOnce, "")
	wantCode(t, err, wire.CodeUnknownRequest, "answer_permission")
	_, err = c.PromptStream(ctx(t), "look", []wire.ImageInput{{MIMEType: "image/png", Data: "not base64!"}})
	wantCode(t, err, wire.CodeInvalidImage, "prompt")
	_, err = c.PromptStream(ctx(t), "", nil)
	wantCode(t, err, wire.CodeInvalidParams, "prompt")

	// Nothing to compact: the work fails with an error event, then done.
	s, err := c.CompactStream(ctx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s)
	if n := len(evs); n < 2 || evs[n-2].Type() != wire.TypeErrorEvent {
		t.Errorf("empty compaction: %v", types(evs))
	}

	slow := startZot(t, nil, "--script", writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "slow slow slow slow", "chunk": 1, "delay_ms": 50},
	}}}}))
	running, err := slow.PromptStream(ctx(t), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, slow.Clear(ctx(t)), wire.CodeBusy, "clear")
	err = slow.SetModel(ctx(t), "scripted")
	wantCode(t, err, wire.CodeBusy, "set_model")
	if _, err := slow.Abort(ctx(t), false); err != nil {
		t.Fatal(err)
	}
	collect(t, running)
}

func TestAuth(t *testing.T) {
	env := []string{"ZOTCORE_RPC_TOKEN=test-token"}
	t.Run("right token", func(t *testing.T) {
		c := startZot(t, env)
		if _, err := c.Hello(ctx(t), "test-token"); err != nil {
			t.Fatal(err)
		}
		if err := c.Ping(ctx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		c := startZot(t, env)
		_, err := c.Hello(ctx(t), "wrong-token")
		wantCode(t, err, wire.CodeInvalidToken, "hello")
		<-c.Done()
		if err := c.Ping(ctx(t)); !errors.Is(err, ErrExited) {
			t.Errorf("ping after a wrong token: %v", err)
		}
		if err := c.Close(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
			t.Errorf("close after a wrong token: %v", err)
		}
	})
	t.Run("no hello", func(t *testing.T) {
		c := startZot(t, env)
		wantCode(t, c.Ping(ctx(t)), wire.CodeAuthRequired, "ping")
	})
}

func TestLineSeparatorsInText(t *testing.T) {
	say := "line\u2028separator\u2029paragraph é中😀 end"
	c := startZot(t, nil, "--script", writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": say, "chunk": 3},
	}}}}))
	s, err := c.PromptStream(ctx(t), "say it \u2028 back", nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s)
	if got := text(evs); got != say {
		t.Errorf("text %q, want %q", got, say)
	}
	um := evs[0].(*wire.UserMessageEvent)
	if got := um.Content[0].(*wire.TextBlock).Text; got != "say it \u2028 back" {
		t.Errorf("user message %q", got)
	}
}

func TestContextCancelled(t *testing.T) {
	c := startZot(t, nil)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.State(done); !errors.Is(err, context.Canceled) {
		t.Errorf("state with a cancelled context: %v", err)
	}
	s, err := c.PromptStream(ctx(t), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s)
	if ev, err := s.Next(done); err != io.EOF {
		t.Errorf("next after done: %v, %v; want io.EOF", ev, err)
	}
	// The dropped answer does not confuse later commands.
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestStartFails(t *testing.T) {
	if _, err := Start(context.Background(), Options{Bin: "/nonexistent/zot"}); err == nil {
		t.Fatal("started a missing binary")
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(done, Options{Bin: zotBin}); !errors.Is(err, context.Canceled) {
		t.Fatalf("start with a cancelled context: %v", err)
	}
}

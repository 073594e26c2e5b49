package scripted

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

var _ llm.Provider = (*Provider)(nil)

func TestName(t *testing.T) {
	if got := New(Config{}).Name(); got != "scripted" {
		t.Errorf("Name() = %q", got)
	}
}

func TestStreamEventsAndResponse(t *testing.T) {
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{
		"thinking": "let me think", "text": "Running two tools.", "chunk": 5,
		"tool_calls": [
			{"name": "bash", "args": {"command": "ls -la"}},
			{"id": "mine", "name": "read", "args_raw": "{not json"}
		],
		"usage": {"input": 120, "output": 40, "cache_read": 3, "cache_write": 4}
	}]}]}`)})
	var rec recorder
	resp, err := p.Stream(providertest.HangGuard(t), request(user("go")), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	evs := rec.all()
	if evs[0].Kind != llm.EventStart {
		t.Fatalf("first event %v", evs[0])
	}
	for i, ev := range evs[1:] {
		if ev.Kind == llm.EventStart {
			t.Fatalf("EventStart repeated at %d", i+1)
		}
	}
	if got := strings.Join(rec.texts(llm.EventThinkingDelta), ""); got != "let me think" {
		t.Errorf("thinking deltas join to %q", got)
	}
	if got := rec.texts(llm.EventTextDelta); !reflect.DeepEqual(got, []string{"Runni", "ng tw", "o too", "ls."}) {
		t.Errorf("text deltas %q", got)
	}
	// Thinking, then text, then each tool call as start, args deltas, end.
	var tail []llm.EventKind
	for _, ev := range evs {
		if ev.Kind >= llm.EventToolStart {
			tail = append(tail, ev.Kind)
		}
	}
	firstTool := len(evs) - len(tail)
	for _, ev := range evs[1:firstTool] {
		if ev.Kind != llm.EventThinkingDelta && ev.Kind != llm.EventTextDelta {
			t.Fatalf("tool event before the text ended: %v", kinds(evs))
		}
	}
	var calls []struct{ id, name, args string }
	for _, ev := range evs[firstTool:] {
		switch ev.Kind {
		case llm.EventToolStart:
			calls = append(calls, struct{ id, name, args string }{ev.ToolID, ev.ToolName, ""})
		case llm.EventToolArgsDelta:
			c := &calls[len(calls)-1]
			if ev.ToolID != c.id || len(ev.Text) > 5 {
				t.Errorf("args delta %+v in call %q", ev, c.id)
			}
			c.args += ev.Text
		case llm.EventToolEnd:
			if ev.ToolID != calls[len(calls)-1].id {
				t.Errorf("tool end %+v", ev)
			}
		default:
			t.Errorf("unexpected event %v among tool events", ev)
		}
	}
	wantCalls := []struct{ id, name, args string }{
		{"call_0_0_0", "bash", `{"command":"ls -la"}`},
		{"mine", "read", "{not json"},
	}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("streamed calls %+v", calls)
	}

	if resp.Stop != llm.StopToolUse || resp.Usage != (llm.Usage{Input: 120, Output: 40, CacheRead: 3, CacheWrite: 4}) {
		t.Errorf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
	c := resp.Message.Content
	if resp.Message.Role != llm.RoleAssistant || len(c) != 4 {
		t.Fatalf("message %+v", resp.Message)
	}
	if th, ok := c[0].(*llm.ThinkingBlock); !ok || th.Provider != "scripted" || th.Text != "let me think" {
		t.Errorf("block 0 = %#v", c[0])
	}
	if tx, ok := c[1].(*llm.TextBlock); !ok || tx.Text != "Running two tools." {
		t.Errorf("block 1 = %#v", c[1])
	}
	if tc, ok := c[2].(*llm.ToolCallBlock); !ok || tc.ID != "call_0_0_0" || tc.Name != "bash" || string(tc.Args) != `{"command":"ls -la"}` || tc.ArgsError != "" {
		t.Errorf("block 2 = %#v", c[2])
	}
	tc, ok := c[3].(*llm.ToolCallBlock)
	if !ok || tc.ID != "mine" || string(tc.Args) != "{}" || !strings.Contains(tc.ArgsError, "not valid JSON") || !strings.Contains(tc.ArgsError, "{not json") {
		t.Errorf("block 3 = %#v", c[3])
	}
}

func TestStreamDefaults(t *testing.T) {
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{"text":"abcdefghijklmnopq"}]}]}`)})
	var rec recorder
	req := request(user("0123456789"))
	req.System = "sys"
	resp, err := p.Stream(providertest.HangGuard(t), req, rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.texts(llm.EventTextDelta); !reflect.DeepEqual(got, []string{"abcdefgh", "ijklmnop", "q"}) {
		t.Errorf("default chunking: %q", got)
	}
	// 13 bytes of request and 17 of answer, a token per 4 bytes rounded up.
	if resp.Stop != llm.StopEndTurn || resp.Usage != (llm.Usage{Input: 4, Output: 5}) {
		t.Errorf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
}

func TestStreamStopOverrideAndNilSink(t *testing.T) {
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{"text":"cut short","stop":"length"}]}]}`)})
	resp, err := p.Stream(providertest.HangGuard(t), request(user("x")), nil)
	if err != nil || resp.Stop != llm.StopLength || resp.Message.Text() != "cut short" {
		t.Errorf("resp %+v, err %v", resp, err)
	}
}

func TestStreamEcho(t *testing.T) {
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{"echo":true}]}]}`)})
	resp, err := p.Stream(providertest.HangGuard(t), request(user("first"), assistant("x"), user("héllo there")), nil)
	if err != nil || resp.Message.Text() != "You said: héllo there" {
		t.Errorf("resp %q, err %v", resp.Message.Text(), err)
	}
}

func TestStreamChunksOnRuneBoundaries(t *testing.T) {
	text := "Grüße aus Köln — 日本語のテキスト 🎉🎉"
	p := New(Config{Script: &Script{Turns: []Turn{{Steps: []Step{{Text: text, Chunk: 4}}}}}})
	var rec recorder
	resp, err := p.Stream(providertest.HangGuard(t), request(user("x")), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	deltas := rec.texts(llm.EventTextDelta)
	for _, d := range deltas {
		if !utf8.ValidString(d) || (len(d) > 4 && utf8.RuneCountInString(d) > 1) {
			t.Errorf("bad delta %q", d)
		}
	}
	if strings.Join(deltas, "") != text || resp.Message.Text() != text {
		t.Errorf("deltas join to %q", strings.Join(deltas, ""))
	}
}

func TestStreamIsDeterministic(t *testing.T) {
	p := New(Config{})
	req := request(user("one"), assistant("a"), toolResult("call_0_0_0", "out"), user("two"))
	var r1, r2 recorder
	a, err1 := p.Stream(providertest.HangGuard(t), req, r1.sink)
	b, err2 := p.Stream(providertest.HangGuard(t), req, r2.sink)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) || !reflect.DeepEqual(r1.all(), r2.all()) {
		t.Errorf("two plays differ: %+v / %+v (%v, %v)", a, b, err1, err2)
	}
}

func TestStatusErrorRetriedUntilTimes(t *testing.T) {
	var sl providertest.Sleeps
	p := New(Config{Sleep: sl.Sleep, Script: mustParse(t, `{"turns":[{"steps":[
		{"text":"made it","error":{"status":529,"kind":"overloaded_error","retry_after_ms":2000,"times":2}}]}]}`)})
	var rec recorder
	resp, err := p.Stream(providertest.HangGuard(t), request(user("x")), rec.sink)
	if err != nil || resp.Message.Text() != "made it" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	// Two failed attempts, each followed by a wait of min(2000ms, 50ms).
	if got := sl.Got(); !reflect.DeepEqual(got, []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}) {
		t.Errorf("waits %v", got)
	}
	if evs := rec.all(); evs[0].Kind != llm.EventStart || len(rec.texts(llm.EventTextDelta)) == 0 {
		t.Errorf("events %v", kinds(evs))
	}
}

func TestStatusErrorShortRetryAfter(t *testing.T) {
	var sl providertest.Sleeps
	p := New(Config{Sleep: sl.Sleep, Script: mustParse(t, `{"turns":[{"steps":[
		{"text":"ok","error":{"status":503,"retry_after_ms":10,"times":1}}]}]}`)})
	if _, err := p.Stream(providertest.HangGuard(t), request(user("x")), nil); err != nil {
		t.Fatal(err)
	}
	if got := sl.Got(); !reflect.DeepEqual(got, []time.Duration{10 * time.Millisecond}) {
		t.Errorf("waits %v", got)
	}
}

func TestStatusErrorExhaustsAttempts(t *testing.T) {
	var sl providertest.Sleeps
	p := New(Config{Sleep: sl.Sleep, Script: mustParse(t, `{"turns":[{"steps":[
		{"text":"never","error":{"status":429,"kind":"rate_limit_error","message":"slow down"}}]}]}`)})
	var rec recorder
	resp, err := p.Stream(providertest.HangGuard(t), request(user("x")), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 429 || le.Kind != "rate_limit_error" || le.Message != "slow down" || !le.Retryable || le.Provider != "scripted" {
		t.Fatalf("err = %#v", err)
	}
	if n := len(sl.Got()); n != 3 {
		t.Errorf("%d waits, want 3 (4 attempts)", n)
	}
	for _, d := range sl.Got() {
		if d < 0 || d > time.Microsecond {
			t.Errorf("wait %v without a retry_after_ms, want about 0", d)
		}
	}
	if len(rec.all()) != 0 || resp.Stop != llm.StopError || len(resp.Message.Content) != 0 {
		t.Errorf("events %v, resp %+v", kinds(rec.all()), resp)
	}
}

func TestStatusErrorNotRetryable(t *testing.T) {
	var sl providertest.Sleeps
	p := New(Config{Sleep: sl.Sleep, Script: mustParse(t, `{"turns":[{"steps":[{"error":{"status":400}}]}]}`)})
	_, err := p.Stream(providertest.HangGuard(t), request(user("x")), nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 400 || le.Retryable || le.Message != "Bad Request" {
		t.Fatalf("err = %#v", err)
	}
	if n := len(sl.Got()); n != 0 {
		t.Errorf("%d waits for a non-retryable status", n)
	}
}

func TestStatusErrorRetryAfterTooLong(t *testing.T) {
	// Like a real provider, a delay longer than it would wait ends retries.
	var sl providertest.Sleeps
	p := New(Config{Sleep: sl.Sleep, Script: mustParse(t, `{"turns":[{"steps":[
		{"error":{"status":429,"retry_after_ms":3600000}}]}]}`)})
	_, err := p.Stream(providertest.HangGuard(t), request(user("x")), nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.RetryAfter != time.Hour {
		t.Fatalf("err = %#v", err)
	}
	if n := len(sl.Got()); n != 0 {
		t.Errorf("%d waits", n)
	}
}

func TestMidStreamFailure(t *testing.T) {
	var sl providertest.Sleeps
	p := New(Config{Sleep: sl.Sleep, Script: mustParse(t, `{"turns":[{"steps":[{
		"thinking": "hm", "text": "abcdéfgh", "chunk": 3,
		"tool_calls": [{"name": "bash", "args": {}}],
		"usage": {"input": 50, "output": 9},
		"error": {"after_bytes": 5}}]}]}`)})
	var rec recorder
	resp, err := p.Stream(providertest.HangGuard(t), request(user("x")), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "overloaded_error" || le.Status != 0 || !le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	// Five bytes would split "é"; four go out.
	if got := rec.texts(llm.EventTextDelta); !reflect.DeepEqual(got, []string{"abc", "d"}) {
		t.Errorf("text deltas %q", got)
	}
	for _, ev := range rec.all() {
		if ev.Kind >= llm.EventToolStart {
			t.Errorf("tool event after the failure: %+v", ev)
		}
	}
	if resp.Stop != llm.StopError || resp.Message.Text() != "abcd" || resp.Usage != (llm.Usage{Input: 50}) {
		t.Errorf("partial %+v", resp)
	}
	if len(resp.Message.Content) != 2 { // thinking and text
		t.Errorf("partial content %#v", resp.Message.Content)
	}
	if n := len(sl.Got()); n != 0 {
		t.Errorf("a mid-stream failure was retried (%d waits)", n)
	}
}

func TestMidStreamFailureKind(t *testing.T) {
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{
		"text": "abc", "error": {"after_bytes": 1, "kind": "invalid_request_error", "message": "nope"}}]}]}`)})
	_, err := p.Stream(providertest.HangGuard(t), request(user("x")), nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "invalid_request_error" || le.Message != "nope" || le.Retryable {
		t.Fatalf("err = %#v", err)
	}
}

func TestCutAfter(t *testing.T) {
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{
		"text": "hello world", "cut_after": 7, "tool_calls": [{"name": "ls"}]}]}]}`)})
	var rec recorder
	resp, err := p.Stream(providertest.HangGuard(t), request(user("x")), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "stream_cut" || !le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	if got := strings.Join(rec.texts(llm.EventTextDelta), ""); got != "hello w" {
		t.Errorf("streamed %q", got)
	}
	if resp.Stop != llm.StopError || resp.Message.Text() != "hello w" || len(resp.Message.ToolCalls()) != 0 {
		t.Errorf("partial %+v", resp)
	}
}

func TestCancelDuringDelayReturnsPartial(t *testing.T) {
	// Every delta waits ten minutes; the first two waits are skipped, and
	// the third is the package's own timer sleep, cancelled while it waits.
	ctx, cancel := context.WithCancel(providertest.HangGuard(t))
	defer cancel()
	waits := 0
	p := New(Config{
		Script: mustParse(t, `{"turns":[{"steps":[{"text":"abcdef","chunk":2,"delay_ms":600000}]}]}`),
		Sleep: func(ctx context.Context, d time.Duration) error {
			waits++
			if waits <= 2 {
				return nil
			}
			return sleep(ctx, d)
		},
	})
	sink := func(ev llm.Event) {
		if ev.Kind == llm.EventTextDelta && ev.Text == "cd" {
			go func() {
				time.Sleep(20 * time.Millisecond)
				cancel()
			}()
		}
	}
	done := make(chan struct{})
	var resp *llm.Response
	var err error
	go func() {
		defer close(done)
		resp, err = p.Stream(ctx, request(user("x")), sink)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancellation")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if resp.Stop != llm.StopAborted || resp.Message.Text() != "abcd" {
		t.Errorf("partial %+v", resp)
	}
}

func TestCancelDuringToolArgsDropsTheCall(t *testing.T) {
	ctx, cancel := context.WithCancel(providertest.HangGuard(t))
	defer cancel()
	p := New(Config{Script: mustParse(t, `{"turns":[{"steps":[{"text":"hi","chunk":4,
		"tool_calls":[{"name":"a","args":{"k":"v"}},{"name":"b","args":{"long":"argument text"}}]}]}]}`)})
	sink := func(ev llm.Event) {
		if ev.Kind == llm.EventToolStart && ev.ToolName == "b" {
			cancel()
		}
	}
	resp, err := p.Stream(ctx, request(user("x")), sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	calls := resp.Message.ToolCalls()
	if resp.Stop != llm.StopAborted || resp.Message.Text() != "hi" || len(calls) != 1 || calls[0].Name != "a" {
		t.Errorf("partial %+v", resp)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var rec recorder
	resp, err := New(Config{}).Stream(ctx, request(user("x")), rec.sink)
	if !errors.Is(err, context.Canceled) || resp.Stop != llm.StopAborted || len(rec.all()) != 0 {
		t.Errorf("resp %+v, err %v, events %v", resp, err, kinds(rec.all()))
	}
}

func TestEmptyScriptIsAnError(t *testing.T) {
	for _, s := range []*Script{{}, {Turns: []Turn{{}}}} {
		resp, err := New(Config{Script: s}).Stream(providertest.HangGuard(t), request(user("x")), nil)
		if err == nil || resp == nil || resp.Stop != llm.StopError {
			t.Errorf("script %+v: resp %+v, err %v", s, resp, err)
		}
	}
}

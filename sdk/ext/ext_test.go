package ext_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"zot.dev/zot/sdk/ext"
	"zot.dev/zot/sdk/extwire"
)

// hangGuard bounds every wait of these tests; it only catches hangs.
const hangGuard = 30 * time.Second

// fakeHost is an in-process host: it speaks to an Extension's Serve over
// pipes, records every frame the extension writes with whether hello_ack
// had been written yet, and checks each against the schema.
type fakeHost struct {
	t      *testing.T
	toExt  *io.PipeWriter
	frames chan recorded
	acked  atomic.Bool
	served chan struct{} // closed when Serve returned
	err    error         // what it returned
}

type recorded struct {
	f          extwire.ExtensionFrame
	afterAck   bool
	raw        string
	readFailed error
}

func startHost(t *testing.T, e *ext.Extension) *fakeHost {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &fakeHost{t: t, toExt: inW, frames: make(chan recorded, 256), served: make(chan struct{})}
	var logs strings.Builder
	var logMu sync.Mutex
	e.SetLogOutput(writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return logs.Write(p) }))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { h.err = e.Serve(ctx, inR, outW); outW.Close(); close(h.served) }()
	go func() {
		defer close(h.frames)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			after := h.acked.Load()
			line := sc.Text()
			if err := extwire.ValidateExtensionFrame([]byte(line)); err != nil {
				t.Errorf("frame breaks the schema: %v: %s", err, line)
			}
			f, err := extwire.DecodeExtensionFrame([]byte(line))
			h.frames <- recorded{f: f, afterAck: after, raw: line, readFailed: err}
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		select {
		case <-h.served:
		case <-time.After(hangGuard):
			t.Error("Serve did not return")
		}
		for range h.frames {
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("extension log:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	return h
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// send writes a host frame; hello_ack is marked before it is written.
func (h *fakeHost) send(f extwire.HostFrame) {
	h.t.Helper()
	if _, ok := f.(*extwire.HelloAckFrame); ok {
		h.acked.Store(true)
	}
	if _, err := h.toExt.Write(append(f.AppendJSON(nil), '\n')); err != nil {
		h.t.Fatalf("writing %s: %v", f.Type(), err)
	}
}

// next returns the next frame the extension wrote.
func (h *fakeHost) next() recorded {
	h.t.Helper()
	select {
	case r, ok := <-h.frames:
		if !ok {
			h.t.Fatal("the extension's output ended")
		}
		if r.readFailed != nil {
			h.t.Fatalf("undecodable frame %s: %v", r.raw, r.readFailed)
		}
		return r
	case <-time.After(hangGuard):
		h.t.Fatal("no frame from the extension")
	}
	return recorded{}
}

// handshake reads hello and the frames up to ready, answering hello with
// hello_ack, and returns the frames read.
func (h *fakeHost) handshake(dataDir string) []recorded {
	h.t.Helper()
	return h.ack(h.hello(), dataDir)
}

// hello reads the first frame, which must be hello.
func (h *fakeHost) hello() recorded {
	h.t.Helper()
	hello := h.next()
	if hello.f.Type() != extwire.TypeHelloFrame {
		h.t.Fatalf("first frame %s", hello.raw)
	}
	return hello
}

// ack sends hello_ack and reads the frames up to ready.
func (h *fakeHost) ack(hello recorded, dataDir string) []recorded {
	h.t.Helper()
	out := []recorded{hello}
	h.send(&extwire.HelloAckFrame{ProtocolVersion: 1, ZotVersion: "test", Provider: "scripted", Model: "m", CWD: "/", ExtensionDir: dataDir, DataDir: dataDir})
	for {
		r := h.next()
		out = append(out, r)
		if r.f.Type() == extwire.TypeReadyFrame {
			return out
		}
	}
}

func (h *fakeHost) served_() error {
	h.t.Helper()
	select {
	case <-h.served:
		return h.err
	case <-time.After(hangGuard):
		h.t.Fatal("Serve did not return")
	}
	return nil
}

var objSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)

// Nothing that depends on hello_ack is written before it: the Init
// functions' registrations, ready and a notice pushed early all come
// after it; hello and the registrations and subscriptions made before Run
// come before, so a slow Init never leaves the host holding the extension
// ready without its intercepts.
func TestNothingBeforeHelloAck(t *testing.T) {
	e := ext.New("t", "1.2.3")
	e.Command("hi", "say hi", func(ctx context.Context, args string) ext.Response { return ext.Display("hi " + args) })
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision { return ext.TurnDecision{} })
	e.On(ext.TurnEnd, func(ctx context.Context, ev *ext.Event) {})
	var seen ext.HostInfo
	e.Init(func(ctx context.Context, host ext.HostInfo) error {
		seen = host
		e.Tool("late", "registered in Init", objSchema, func(ctx context.Context, args json.RawMessage) ext.ToolResult { return ext.Text("x") })
		return nil
	})
	h := startHost(t, e)
	hello := h.hello() // Serve runs: a notice now waits for hello_ack
	notified := make(chan error, 1)
	go func() { notified <- e.Notify(ext.LevelInfo, "early") }()

	frames := h.ack(hello, "/data/t")
	var types []string
	var notice *recorded
	for _, r := range frames {
		dependsOnAck := r.f.Type() != extwire.TypeHelloFrame && r.f.Type() != extwire.TypeRegisterCommandFrame && r.f.Type() != extwire.TypeSubscribeFrame
		if dependsOnAck && !r.afterAck {
			t.Errorf("%s was written before hello_ack", r.raw)
		}
		if r.f.Type() == extwire.TypeNotifyFrame {
			notice = &r
			continue
		}
		types = append(types, r.f.Type())
	}
	want := "hello register_command subscribe register_tool ready"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("frames %q, want %q", got, want)
	}
	hf := frames[0].f.(*extwire.HelloFrame)
	if hf.Name != "t" || hf.Version != "1.2.3" || strings.Join(hf.Capabilities, ",") != "commands,events" {
		t.Errorf("hello: %s", frames[0].raw)
	}
	for _, r := range frames {
		if sub, ok := r.f.(*extwire.SubscribeFrame); ok && (len(sub.Events) != 1 || sub.Events[0] != extwire.EventNameTurnEnd || len(sub.Intercept) != 1 || sub.Intercept[0] != extwire.InterceptEventTurnStart) {
			t.Errorf("subscribe: %s", r.raw)
		}
	}
	if notice == nil {
		n := h.next()
		notice = &n
	}
	if f, ok := notice.f.(*extwire.NotifyFrame); !ok || f.Message != "early" || !notice.afterAck {
		t.Fatalf("notice: %s (after ack %v)", notice.raw, notice.afterAck)
	}
	if err := <-notified; err != nil {
		t.Fatal(err)
	}
	if seen.DataDir != "/data/t" || e.Host().Provider != "scripted" {
		t.Errorf("host info: %+v", seen)
	}
}

func TestToolsAndCommands(t *testing.T) {
	e := ext.New("t", "1")
	e.Tool("echo", "echo", objSchema, func(ctx context.Context, args json.RawMessage) ext.ToolResult {
		var in struct{ Text string }
		if err := json.Unmarshal(args, &in); err != nil {
			return ext.ToolError("bad args: %v", err)
		}
		return ext.Text("echo: " + in.Text)
	}, ext.WithTimeout(1500*time.Millisecond))
	e.Tool("boom", "panics", nil, func(ctx context.Context, args json.RawMessage) ext.ToolResult { panic("kaboom") })
	e.Command("c", "", func(ctx context.Context, args string) ext.Response {
		switch args {
		case "prompt":
			return ext.Prompt("go on")
		case "panel":
			return ext.OpenPanel(ext.Panel{ID: "p", Title: "T", Lines: []string{"a"}})
		case "fail":
			return ext.CommandError("no %s", "city")
		case "half":
			return ext.Display("did one").WithError("not %d", 2)
		}
		return ext.Insert(args)
	})
	h := startHost(t, e)
	frames := h.handshake("/d")
	if rt := frames[1].f.(*extwire.RegisterToolFrame); rt.TimeoutMs == nil || *rt.TimeoutMs != 1500 {
		t.Errorf("register_tool: %s", frames[1].raw)
	}

	h.send(&extwire.ToolCallFrame{ID: "1", Name: "echo", Args: json.RawMessage(`{"text":"hi"}`)})
	r := h.next().f.(*extwire.ToolResultFrame)
	if r.ID != "1" || r.IsError != nil || r.Content[0].(*extwire.TextContent).Text != "echo: hi" {
		t.Fatalf("tool_result: %+v", r)
	}
	h.send(&extwire.ToolCallFrame{ID: "2", Name: "boom", Args: json.RawMessage(`{}`)})
	r = h.next().f.(*extwire.ToolResultFrame)
	if r.IsError == nil || !*r.IsError || !strings.Contains(r.Content[0].(*extwire.TextContent).Text, "kaboom") {
		t.Fatalf("panicking tool: %+v", r)
	}
	h.send(&extwire.ToolCallFrame{ID: "3", Name: "nope", Args: json.RawMessage(`{}`)})
	if r = h.next().f.(*extwire.ToolResultFrame); r.IsError == nil || !strings.Contains(r.Content[0].(*extwire.TextContent).Text, `no tool "nope"`) {
		t.Fatalf("unknown tool: %+v", r)
	}

	for _, c := range []struct {
		args string
		want extwire.CommandResponseFrame
	}{
		{"prompt", extwire.CommandResponseFrame{Action: extwire.CommandActionPrompt, Prompt: "go on"}},
		{"text", extwire.CommandResponseFrame{Action: extwire.CommandActionInsert, Insert: "text"}},
		{"fail", extwire.CommandResponseFrame{Action: extwire.CommandActionNoop, Error: "no city"}},
		{"half", extwire.CommandResponseFrame{Action: extwire.CommandActionDisplay, Display: "did one", Error: "not 2"}},
		{"panel", extwire.CommandResponseFrame{Action: extwire.CommandActionOpenPanel, OpenPanel: &extwire.Panel{ID: "p", Title: "T", Lines: []string{"a"}}}},
	} {
		h.send(&extwire.CommandInvokedFrame{ID: "c-" + c.args, Name: "c", Args: c.args})
		got := h.next()
		c.want.ID = "c-" + c.args
		if want := string(c.want.AppendJSON(nil)); got.raw != want {
			t.Errorf("command %s: got %s, want %s", c.args, got.raw, want)
		}
	}
}

func TestIntercepts(t *testing.T) {
	e := ext.New("guard", "1")
	e.InterceptToolCall(func(ctx context.Context, call ext.ToolCall) ext.ToolCallDecision {
		switch call.Name {
		case "bash":
			return ext.ToolCallDecision{Block: true, Reason: "no bash"}
		case "ls":
			return ext.ToolCallDecision{ModifiedArgs: json.RawMessage(`{"path":"/safe"}`)}
		case "panic":
			panic("guard bug")
		}
		return ext.ToolCallDecision{}
	})
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
		return ext.TurnDecision{Block: step > 2, Reason: "too many steps"}
	})
	e.InterceptAssistantMessage(func(ctx context.Context, text string) ext.MessageDecision {
		return ext.MessageDecision{ReplaceText: strings.ReplaceAll(text, "SECRET", "[redacted]")}
	})
	h := startHost(t, e)
	h.handshake("/d")
	step := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		in   extwire.EventInterceptFrame
		want string
	}{
		{extwire.EventInterceptFrame{ID: "1", Event: "tool_call", ToolName: "bash", ToolArgs: json.RawMessage(`{"command":"rm -rf /"}`)}, `{"type":"event_intercept_response","id":"1","block":true,"reason":"no bash"}`},
		{extwire.EventInterceptFrame{ID: "2", Event: "tool_call", ToolName: "ls", ToolArgs: json.RawMessage(`{"path":"/"}`)}, `{"type":"event_intercept_response","id":"2","modified_args":{"path":"/safe"}}`},
		{extwire.EventInterceptFrame{ID: "3", Event: "tool_call", ToolName: "read", ToolArgs: json.RawMessage(`{}`)}, `{"type":"event_intercept_response","id":"3"}`},
		{extwire.EventInterceptFrame{ID: "4", Event: "turn_start", Step: step(1)}, `{"type":"event_intercept_response","id":"4"}`},
		{extwire.EventInterceptFrame{ID: "5", Event: "turn_start", Step: step(3)}, `{"type":"event_intercept_response","id":"5","block":true,"reason":"too many steps"}`},
		{extwire.EventInterceptFrame{ID: "6", Event: "assistant_message", Text: "key SECRET"}, `{"type":"event_intercept_response","id":"6","replace_text":"key [redacted]"}`},
	} {
		h.send(&c.in)
		if got := h.next().raw; got != c.want {
			t.Errorf("intercept %s: got %s, want %s", c.in.ID, got, c.want)
		}
	}
	// A guard that panics blocks: it must not let things through.
	h.send(&extwire.EventInterceptFrame{ID: "7", Event: "tool_call", ToolName: "panic", ToolArgs: json.RawMessage(`{}`)})
	if r := h.next().f.(*extwire.EventInterceptResponseFrame); r.Block == nil || !*r.Block || !strings.Contains(r.Reason, "guard bug") {
		t.Fatalf("panicking guard: %+v", r)
	}
}

// A second intercept of an event is chained after the first: the first
// block wins, each judges what the one before rewrote, and the last
// rewrite is the answer.
func TestInterceptsChain(t *testing.T) {
	e := ext.New("guard", "1")
	e.InterceptToolCall(func(ctx context.Context, call ext.ToolCall) ext.ToolCallDecision {
		if call.Name == "bash" {
			return ext.ToolCallDecision{Block: true, Reason: "no bash"}
		}
		return ext.ToolCallDecision{ModifiedArgs: json.RawMessage(`{"path":"/safe"}`)}
	})
	e.InterceptToolCall(func(ctx context.Context, call ext.ToolCall) ext.ToolCallDecision {
		if string(call.Args) != `{"path":"/safe"}` {
			return ext.ToolCallDecision{Block: true, Reason: "saw " + string(call.Args)}
		}
		return ext.ToolCallDecision{}
	})
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
		return ext.TurnDecision{Block: true, Reason: "first"}
	})
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision { return ext.TurnDecision{} })
	e.InterceptAssistantMessage(func(ctx context.Context, text string) ext.MessageDecision {
		return ext.MessageDecision{ReplaceText: strings.ReplaceAll(text, "SECRET", "[redacted]")}
	})
	e.InterceptAssistantMessage(func(ctx context.Context, text string) ext.MessageDecision {
		return ext.MessageDecision{ReplaceText: strings.ReplaceAll(text, "TOKEN", "[token]")}
	})
	h := startHost(t, e)
	h.handshake("/d")
	step := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		in   extwire.EventInterceptFrame
		want string
	}{
		{extwire.EventInterceptFrame{ID: "1", Event: "tool_call", ToolName: "bash", ToolArgs: json.RawMessage(`{}`)}, `{"type":"event_intercept_response","id":"1","block":true,"reason":"no bash"}`},
		{extwire.EventInterceptFrame{ID: "2", Event: "tool_call", ToolName: "ls", ToolArgs: json.RawMessage(`{"path":"/"}`)}, `{"type":"event_intercept_response","id":"2","modified_args":{"path":"/safe"}}`},
		{extwire.EventInterceptFrame{ID: "3", Event: "turn_start", Step: step(1)}, `{"type":"event_intercept_response","id":"3","block":true,"reason":"first"}`},
		{extwire.EventInterceptFrame{ID: "4", Event: "assistant_message", Text: "SECRET TOKEN"}, `{"type":"event_intercept_response","id":"4","replace_text":"[redacted] [token]"}`},
	} {
		h.send(&c.in)
		if got := h.next().raw; got != c.want {
			t.Errorf("intercept %s: got %s, want %s", c.in.ID, got, c.want)
		}
	}
}

// Handlers run concurrently; a cancel ends the handler's context with
// the host's reason and its answer is not sent.
func TestConcurrencyAndCancel(t *testing.T) {
	e := ext.New("t", "1")
	release := make(chan struct{})
	cause := make(chan error, 1)
	e.Tool("wait", "", nil, func(ctx context.Context, args json.RawMessage) ext.ToolResult {
		select {
		case <-release:
			return ext.Text("released")
		case <-ctx.Done():
			return ext.Text("cancelled")
		}
	})
	e.Tool("block", "", nil, func(ctx context.Context, args json.RawMessage) ext.ToolResult {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ext.Text("cancelled, never sent")
	})
	e.Tool("free", "", nil, func(ctx context.Context, args json.RawMessage) ext.ToolResult {
		close(release)
		return ext.Text("freed")
	})
	h := startHost(t, e)
	h.handshake("/d")
	h.send(&extwire.ToolCallFrame{ID: "1", Name: "wait", Args: json.RawMessage(`{}`)})
	h.send(&extwire.ToolCallFrame{ID: "2", Name: "free", Args: json.RawMessage(`{}`)})
	got := map[string]string{}
	for range 2 {
		r := h.next().f.(*extwire.ToolResultFrame)
		got[r.ID] = r.Content[0].(*extwire.TextContent).Text
	}
	if got["1"] != "released" || got["2"] != "freed" {
		t.Fatalf("results: %v", got)
	}

	h.send(&extwire.ToolCallFrame{ID: "3", Name: "block", Args: json.RawMessage(`{}`)})
	h.send(&extwire.CancelFrame{ID: "3", Reason: "aborted"})
	var ce *ext.CancelledError
	if err := <-cause; !errors.As(err, &ce) || ce.Reason != "aborted" {
		t.Fatalf("cause %v", err)
	}
	// The next frame answers the next request, not the cancelled one.
	h.send(&extwire.CommandInvokedFrame{ID: "4", Name: "none"})
	if r := h.next(); r.f.Type() != extwire.TypeCommandResponseFrame || !strings.Contains(r.raw, `"id":"4"`) {
		t.Fatalf("after the cancel: %s", r.raw)
	}
}

// Events, panel keys and panel closes are handled in the order sent, one
// at a time; a render pushed from a key handler reaches the host.
func TestEventsAndPanelsInOrder(t *testing.T) {
	e := ext.New("t", "1")
	var mu sync.Mutex
	var got []string
	add := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	running := atomic.Int32{}
	e.On(ext.TurnStart, func(ctx context.Context, ev *ext.Event) {
		if running.Add(1) != 1 {
			t.Error("two event handlers ran at once")
		}
		defer running.Add(-1)
		add("turn " + string(rune('0'+*ev.Step)))
	})
	e.On(ext.ToolCallEvent, func(ctx context.Context, ev *ext.Event) { add("tool " + ev.ToolName) })
	closed := make(chan string, 1)
	e.OnPanelKey(func(ctx context.Context, k ext.PanelKey) {
		add("key " + string(k.Key) + k.Text)
		if err := e.RenderPanel(ext.Panel{ID: k.PanelID, Lines: []string{"pressed " + string(k.Key) + k.Text}}); err != nil {
			t.Error(err)
		}
	})
	e.OnPanelClose(func(ctx context.Context, id string) { closed <- id })
	h := startHost(t, e)
	if caps := h.handshake("/d")[0].f.(*extwire.HelloFrame).Capabilities; strings.Join(caps, ",") != "events,panels" {
		t.Errorf("capabilities %v", caps)
	}
	for i := int64(1); i <= 5; i++ {
		h.send(&extwire.EventFrame{Event: "turn_start", Step: &i})
		h.send(&extwire.EventFrame{Event: "tool_call", ToolName: "t" + string(rune('0'+i))})
	}
	h.send(&extwire.EventFrame{Event: "turn_end"}) // not subscribed: ignored
	h.send(&extwire.PanelKeyFrame{PanelID: "p", Key: "rune", Text: "x"})
	h.send(&extwire.PanelKeyFrame{PanelID: "p", Key: "down"})
	for _, want := range []string{"pressed runex", "pressed down"} {
		r := h.next().f.(*extwire.PanelRenderFrame)
		if r.PanelID != "p" || r.Lines[0] != want {
			t.Fatalf("panel_render %+v, want %q", r, want)
		}
	}
	h.send(&extwire.HostPanelCloseFrame{PanelID: "p"})
	if id := <-closed; id != "p" {
		t.Fatalf("closed %q", id)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "turn 1,tool t1,turn 2,tool t2,turn 3,tool t3,turn 4,tool t4,turn 5,tool t5,key runex,key down"
	if s := strings.Join(got, ","); s != want {
		t.Fatalf("order:\n got %s\nwant %s", s, want)
	}
}

// shutdown is answered, the handlers in flight see their context end,
// and Serve returns nil once they have returned.
func TestShutdown(t *testing.T) {
	e := ext.New("t", "1")
	started := make(chan struct{})
	var finished atomic.Bool
	e.Tool("hang", "", nil, func(ctx context.Context, args json.RawMessage) ext.ToolResult {
		close(started)
		<-ctx.Done()
		finished.Store(true)
		return ext.Text("late")
	})
	h := startHost(t, e)
	h.handshake("/d")
	h.send(&extwire.ToolCallFrame{ID: "1", Name: "hang", Args: json.RawMessage(`{}`)})
	<-started
	h.send(&extwire.ShutdownFrame{})
	if r := h.next(); r.f.Type() != extwire.TypeShutdownAckFrame {
		t.Fatalf("after shutdown: %s", r.raw)
	}
	if err := h.served_(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !finished.Load() {
		t.Fatal("Serve returned before the handler did")
	}
	if err := e.Notify(ext.LevelInfo, "x"); !errors.Is(err, ext.ErrNotRunning) {
		t.Fatalf("Notify after Serve: %v", err)
	}
	if err := e.Serve(context.Background(), strings.NewReader(""), io.Discard); !errors.Is(err, ext.ErrAlreadyRunning) {
		t.Fatalf("second Serve: %v", err)
	}
}

// The end of stdin ends Serve with nil; a registration made once the
// extension is ready is sent at once.
func TestEOFAndLateRegistration(t *testing.T) {
	e := ext.New("t", "1")
	if err := e.Notify(ext.LevelInfo, "x"); !errors.Is(err, ext.ErrNotRunning) {
		t.Fatalf("Notify before Serve: %v", err)
	}
	h := startHost(t, e)
	h.handshake("/d")
	e.Command("later", "added while running", func(ctx context.Context, args string) ext.Response { return ext.Noop() })
	if r := h.next().f.(*extwire.RegisterCommandFrame); r.Name != "later" {
		t.Fatalf("late registration: %+v", r)
	}
	e.On(ext.TurnEnd, func(ctx context.Context, ev *ext.Event) {})
	if r := h.next().f.(*extwire.SubscribeFrame); len(r.Events) != 1 {
		t.Fatalf("late subscribe: %+v", r)
	}
	h.toExt.Close()
	if err := h.served_(); err != nil {
		t.Fatalf("Serve at EOF: %v", err)
	}
}

// A context that ends stops Serve with its cause.
func TestContextEnds(t *testing.T) {
	e := ext.New("t", "1")
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, inR, io.Discard) }()
	stop := errors.New("stop")
	cancel(stop)
	select {
	case err := <-done:
		if !errors.Is(err, stop) {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Serve did not return")
	}
}

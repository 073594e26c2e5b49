package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

const guard = 30 * time.Second

func newScripted(t *testing.T, script string, cfg Config) *Runtime {
	t.Helper()
	dir := t.TempDir()
	cfg.Provider = "scripted"
	cfg.CWD = dir
	if script != "" {
		p := filepath.Join(dir, "script.json")
		if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg.Script = p
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func drain(t *testing.T, ch <-chan Event) []Event {
	t.Helper()
	var out []Event
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatal("events did not end")
		}
	}
}

const slowScript = `{"turns":[{"steps":[{"text":"one two three four five six seven eight nine ten","chunk":2,"delay_ms":20}]}]}`

// TestEventsAreTheWireLines checks that SDK events are exactly the
// generated wire values: each marshals to a line that the reference
// validator accepts and that decodes back to the same line.
func TestEventsAreTheWireLines(t *testing.T) {
	rt := newScripted(t, "", Config{})
	ch, err := rt.Prompt(context.Background(), "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, ch)
	if len(evs) < 10 || evs[len(evs)-1].Type() != wire.TypeDoneEvent {
		t.Fatalf("events %d, last %s", len(evs), evs[len(evs)-1].Type())
	}
	var seq int64
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemacheck.ValidateEvent(line); err != nil {
			t.Errorf("%s: %v", line, err)
		}
		back, err := wire.DecodeEvent(line)
		if err != nil {
			t.Fatal(err)
		}
		if again := back.AppendJSON(nil); !bytes.Equal(again, line) {
			t.Errorf("round trip changed the line:\n%s\n%s", line, again)
		}
		if ev.GetSeq() <= seq || !ev.GetPromptID().IsZero() {
			t.Errorf("%s: seq %d after %d, prompt_id %s", ev.Type(), ev.GetSeq(), seq, ev.GetPromptID())
		}
		seq = ev.GetSeq()
	}
	if st := must(rt.State(context.Background())); st.Busy || st.MessageCount != 4 || st.Usage.CostUSD <= 0 {
		t.Errorf("state after the prompt: %+v", st)
	}
}

func TestOverlapIsBusy(t *testing.T) {
	rt := newScripted(t, slowScript, Config{})
	ch, err := rt.Prompt(context.Background(), "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Prompt(context.Background(), "second", nil); !errors.Is(err, ErrBusy) {
		t.Errorf("overlapping Prompt: %v", err)
	}
	if _, err := rt.Compact(context.Background(), ""); !errors.Is(err, ErrBusy) {
		t.Errorf("overlapping Compact: %v", err)
	}
	if err := rt.Clear(context.Background()); !errors.Is(err, ErrBusy) {
		t.Errorf("Clear while busy: %v", err)
	}
	if err := rt.SetModel(context.Background(), "scripted"); !errors.Is(err, ErrBusy) {
		t.Errorf("SetModel while busy: %v", err)
	}
	drain(t, ch)
	// done arrives after the runtime is idle: the next prompt starts.
	ch, err = rt.Prompt(context.Background(), "third", nil)
	if err != nil {
		t.Fatalf("prompt after done: %v", err)
	}
	drain(t, ch)
}

func TestStalledConsumerDoesNotHoldTheRuntimePastItsContext(t *testing.T) {
	rt := newScripted(t, slowScript, Config{EventBuffer: 1})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := rt.Prompt(ctx, "talk", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the consumer reads nothing
	cancel()
	deadline := time.Now().Add(guard)
	for must(rt.Busy(context.Background())) {
		if time.Now().After(deadline) {
			t.Fatal("the runtime stayed busy after the context ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	evs := drain(t, ch)
	n := len(evs)
	if n < 2 || evs[n-1].Type() != wire.TypeDoneEvent {
		t.Fatalf("late reader got %d events", n)
	}
	if te, ok := evs[n-2].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
		t.Errorf("want turn_end aborted before done, got %s", evs[n-2].Type())
	}
}

func TestCancelAndClose(t *testing.T) {
	rt := newScripted(t, slowScript, Config{})
	if must(rt.Cancel(context.Background())) {
		t.Error("Cancel reported work while idle")
	}
	ch, err := rt.Prompt(context.Background(), "talk", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !must(rt.Cancel(context.Background())) {
		t.Error("Cancel found nothing running")
	}
	evs := drain(t, ch)
	if te, ok := evs[len(evs)-2].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
		t.Errorf("cancelled prompt ended %v", evs[len(evs)-2].Type())
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Prompt(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Prompt after Close: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []Config{
		{},
		{Provider: "nope", CWD: dir},
		{Provider: "scripted", CWD: filepath.Join(dir, "missing")},
		{Provider: "scripted", CWD: dir, Tools: []string{"read", "teleport"}},
		{Provider: "scripted", CWD: dir, Script: filepath.Join(dir, "missing.json")},
		{Provider: "anthropic", CWD: dir, Script: filepath.Join(dir, "s.json")},
	}
	for _, c := range cases {
		if rt, err := New(c); err == nil {
			rt.Close()
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

func TestPromptValidation(t *testing.T) {
	rt := newScripted(t, "", Config{})
	if _, err := rt.Prompt(context.Background(), "", nil); err == nil {
		t.Error("empty prompt accepted")
	}
	if _, err := rt.Prompt(context.Background(), "x", []Image{{MIMEType: "image/png", Data: []byte("not an image")}}); err == nil {
		t.Error("non-image accepted")
	}
	if err := rt.SetModel(context.Background(), ""); err == nil {
		t.Error("an empty model id was accepted")
	}
	// The catalog is advisory: any other id is taken, and listed.
	if err := rt.SetModel(context.Background(), "a-model-the-catalog-lacks"); err != nil {
		t.Errorf("SetModel of an uncatalogued model: %v", err)
	}
	if !slices.ContainsFunc(must(rt.ListModels(context.Background())), func(m wire.ModelInfo) bool { return m.ID == "a-model-the-catalog-lacks" }) {
		t.Errorf("ListModels lacks the current model: %+v", must(rt.ListModels(context.Background())))
	}
	if models := must(rt.ListModels(context.Background())); len(models) == 0 || models[0].Provider != "scripted" {
		t.Errorf("models %+v", models)
	}
}

// TestCloseDeliversDone: Close during a prompt still ends the prompt's
// channel with its done, whether the consumer reads along, reads nothing,
// or reads after Close returned.
func TestCloseDeliversDone(t *testing.T) {
	for i := range 200 {
		rt := newScripted(t, slowScript, Config{EventBuffer: 1 + i%4})
		ch, err := rt.Prompt(context.Background(), "talk", nil)
		if err != nil {
			t.Fatal(err)
		}
		reader := i % 3 // 0: reads along, 1: reads nothing until Close returned, 2: reads a few
		got := make(chan []Event, 1)
		if reader != 1 {
			go func() {
				var evs []Event
				for ev := range ch {
					evs = append(evs, ev)
					if reader == 2 && len(evs) == 3 {
						time.Sleep(time.Millisecond)
					}
				}
				got <- evs
			}()
		}
		time.Sleep(time.Duration(i%5) * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- rt.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatalf("round %d: Close: %v", i, err)
			}
		case <-time.After(guard):
			t.Fatalf("round %d: Close hung (reader %d)", i, reader)
		}
		var evs []Event
		if reader == 1 {
			evs = drain(t, ch)
		} else {
			select {
			case evs = <-got:
			case <-time.After(guard):
				t.Fatalf("round %d: the channel did not end", i)
			}
		}
		if len(evs) == 0 || evs[len(evs)-1].Type() != wire.TypeDoneEvent {
			t.Fatalf("round %d (reader %d): the channel did not end with done (%d events)", i, reader, len(evs))
		}
	}
}

// TestEmptyToolsMeansNone: Tools: []string{} offers the model no tool.
func TestEmptyToolsMeansNone(t *testing.T) {
	rt := newScripted(t, `{"turns":[{"steps":[{"tool_calls":[{"name":"ls","args":{}}]},{"text":"ok"}]}]}`, Config{Tools: []string{}})
	ch, err := rt.Prompt(context.Background(), "list", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range drain(t, ch) {
		if r, ok := ev.(*wire.ToolResultEvent); ok && !r.IsError {
			t.Errorf("ls ran: %s", r.AppendJSON(nil))
		}
	}
}

// TestApproveCallback: Config.Approve is asked before write and bash, and
// its answers decide what runs.
func TestApproveCallback(t *testing.T) {
	var asked []string
	rt := newScripted(t, `{"turns":[{"steps":[
		{"tool_calls":[{"name":"write","args":{"path":"a.txt","content":"x"}},{"name":"bash","args":{"command":"echo hi"}},{"name":"ls","args":{}}]},
		{"text":"ok"}]}]}`, Config{Approve: func(ctx context.Context, req ApprovalRequest) Approval {
		asked = append(asked, req.Tool)
		if req.Tool == "bash" {
			return Approval{Decision: Reject, Reason: "not here"}
		}
		return Approval{Decision: AllowOnce}
	}})
	ch, err := rt.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	var results []*wire.ToolResultEvent
	for _, ev := range drain(t, ch) {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			results = append(results, r)
		}
	}
	if strings.Join(asked, ",") != "write,bash" {
		t.Errorf("asked for %v (ls needs no approval)", asked)
	}
	if len(results) != 3 || results[0].IsError || !results[1].IsError || results[2].IsError {
		t.Fatalf("results %d", len(results))
	}
	if got := string(results[1].AppendJSON(nil)); !strings.Contains(got, "the user rejected the call: not here") {
		t.Errorf("rejected result %s", got)
	}
	if _, err := os.Stat(filepath.Join(rt.CWD(), "a.txt")); err != nil {
		t.Errorf("the approved write did not run: %v", err)
	}
}

// TestSetMessages restores a transcript kept outside zot: the messages of
// one runtime, stored as JSON, become another's, are written to its session
// file, and the conversation goes on.
func TestSetMessages(t *testing.T) {
	first := newScripted(t, "", Config{})
	ch, err := first.Prompt(context.Background(), "list the files", nil)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, ch)
	stored, err := json.Marshal(must(first.Messages(context.Background())))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []wire.Message
	if err := json.Unmarshal(stored, &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 4 {
		t.Fatalf("the built-in script left %d messages, want a tool call and its result", len(msgs))
	}

	file := filepath.Join(t.TempDir(), "s.jsonl")
	rt := newScripted(t, "", Config{SessionFile: file})
	if err := rt.SetMessages(msgs); err != nil {
		t.Fatalf("SetMessages: %v", err)
	}
	if got, _ := json.Marshal(must(rt.Messages(context.Background()))); !bytes.Equal(got, stored) {
		t.Errorf("Messages after SetMessages =\n%s\nwant\n%s", got, stored)
	}
	ch, err = rt.Prompt(context.Background(), "and now?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if evs := drain(t, ch); evs[len(evs)-1].Type() != wire.TypeDoneEvent {
		t.Fatalf("prompt after SetMessages ended with %s", evs[len(evs)-1].Type())
	}
	want := must(rt.Messages(context.Background()))
	if len(want) <= len(msgs) {
		t.Fatalf("the prompt added nothing: %d messages", len(want))
	}
	rt.Close()
	resumed := newScripted(t, "", Config{SessionFile: file})
	if got, _ := json.Marshal(must(resumed.Messages(context.Background()))); !bytes.Equal(got, mustJSON(t, want)) {
		t.Errorf("the session file holds\n%s\nwant\n%s", got, mustJSON(t, want))
	}

	// A transcript a provider would refuse changes nothing.
	before := mustJSON(t, must(resumed.Messages(context.Background())))
	err = resumed.SetMessages(msgs[:2]) // a tool call without its result
	if err == nil || !strings.Contains(err.Error(), "no results") {
		t.Errorf("SetMessages of a dangling tool call: %v", err)
	}
	if got := mustJSON(t, must(resumed.Messages(context.Background()))); !bytes.Equal(got, before) {
		t.Errorf("a refused SetMessages changed the transcript to\n%s", got)
	}
	if err := resumed.SetMessages(nil); err != nil || must(resumed.State(context.Background())).MessageCount != 0 {
		t.Errorf("SetMessages(nil): %v, %d messages left", err, must(resumed.State(context.Background())).MessageCount)
	}
	resumed.Close()
	if err := resumed.SetMessages(msgs); !errors.Is(err, ErrClosed) {
		t.Errorf("SetMessages after Close: %v, want ErrClosed", err)
	}
}

func TestSetMessagesWhileBusy(t *testing.T) {
	rt := newScripted(t, slowScript, Config{})
	ch, err := rt.Prompt(context.Background(), "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.SetMessages(nil); !errors.Is(err, ErrBusy) {
		t.Errorf("SetMessages while busy: %v, want ErrBusy", err)
	}
	drain(t, ch)
	if must(rt.State(context.Background())).MessageCount != 2 {
		t.Errorf("the refused SetMessages changed the transcript: %d messages", must(rt.State(context.Background())).MessageCount)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// must returns v, panicking on err: for the calls of an open Runtime,
// which fail only after Close or with a context that has ended.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

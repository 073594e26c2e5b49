package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

func TestHookBlocksTool(t *testing.T) {
	bash := &countingTool{name: "bash"}
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "bash", Args: `{"command":"rm -rf /"}`},
			{Name: "ls", Args: `{}`},
		}},
		scripted.Step{Text: "ok"},
	)})
	var seen []ToolCall
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(bash, ls)
		c.Hooks.BeforeTool = func(ctx context.Context, call ToolCall) ToolVerdict {
			seen = append(seen, call)
			if call.Name == "bash" {
				return ToolVerdict{Block: true, Reason: "destructive command"}
			}
			return ToolVerdict{}
		}
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "clean up", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if len(bash.calls()) != 0 || len(ls.calls()) != 1 {
		t.Errorf("bash ran %d times, ls %d times", len(bash.calls()), len(ls.calls()))
	}
	if len(seen) != 2 || seen[0].Name != "bash" || string(seen[0].Args) != `{"command":"rm -rf /"}` || seen[0].ID == "" {
		t.Errorf("hook saw %+v", seen)
	}
	res := toolResults(rec)
	if !res[0].IsError || textOf(res[0].Content) != "the call was blocked and did not run: destructive command" {
		t.Errorf("blocked result = %s", res[0].AppendJSON(nil))
	}
	if res[1].IsError {
		t.Errorf("allowed result = %s", res[1].AppendJSON(nil))
	}
	checkValid(t, a)
}

func TestHookRewritesArgs(t *testing.T) {
	dir := t.TempDir()
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "write", Args: `{"path":"wanted.txt","content":"hi"}`},
			{Name: "write", Args: `{"path":"second.txt","content":"hi"}`},
		}},
		scripted.Step{Text: "ok"},
	)})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = builtins(dir)
		c.Hooks.BeforeTool = func(ctx context.Context, call ToolCall) ToolVerdict {
			var args map[string]any
			if err := json.Unmarshal(call.Args, &args); err != nil {
				t.Errorf("hook args: %v", err)
			}
			if args["path"] == "wanted.txt" {
				return ToolVerdict{Args: json.RawMessage(`{"path":"sandbox/wanted.txt","content":"hi"}`)}
			}
			return ToolVerdict{Args: json.RawMessage(`["not", "an", "object"]`)}
		}
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "write", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sandbox", "wanted.txt")); err != nil {
		t.Errorf("rewritten write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "wanted.txt")); !os.IsNotExist(err) {
		t.Errorf("the original path was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "second.txt")); !os.IsNotExist(err) {
		t.Errorf("a call with invalid rewritten args ran")
	}
	res := toolResults(rec)
	if res[0].IsError || !res[1].IsError || !strings.Contains(textOf(res[1].Content), "not a JSON object") {
		t.Errorf("results = %s / %s", res[0].AppendJSON(nil), res[1].AppendJSON(nil))
	}
	// The transcript keeps what the model wrote.
	if got := string(a.Transcript()[1].ToolCalls()[0].Args); got != `{"path":"wanted.txt","content":"hi"}` {
		t.Errorf("transcript args = %s", got)
	}
}

func TestHookBlocksFirstTurn(t *testing.T) {
	called := false
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		called = true
		return answer(sink, "x", llm.Usage{}), nil
	})
	a := newAgent(t, p, func(c *Config) {
		c.Hooks.BeforeTurn = func(ctx context.Context, step int) error {
			return errors.New("outside working hours")
		}
	})
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "hi", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeBlocked || ae.Error() != "turn blocked: outside working hours" {
		t.Fatalf("err = %v", err)
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopError || te.Error != "turn blocked: outside working hours" {
		t.Errorf("turn_end = %s", te.AppendJSON(nil))
	}
	if called || a.MessageCount() != 0 {
		t.Errorf("provider called = %v, messages = %d", called, a.MessageCount())
	}
}

func TestHookBlocksLaterTurn(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "ls"}}},
		scripted.Step{Text: "never"},
	)})
	var steps []int
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		c.Hooks.BeforeTurn = func(ctx context.Context, step int) error {
			steps = append(steps, step)
			if step == 2 {
				// A hook may choose the code itself.
				return &Error{Code: wire.CodeMaxSteps, Msg: "budget used up"}
			}
			return nil
		}
	})
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "go", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeMaxSteps || ae.Msg != "budget used up" {
		t.Fatalf("err = %v", err)
	}
	types := rec.types()
	if tail := strings.Join(types[len(types)-3:], " "); tail != "tool_result turn_start turn_end" {
		t.Errorf("tail = %s", tail)
	}
	if len(steps) != 2 || steps[0] != 1 || steps[1] != 2 {
		t.Errorf("steps = %v", steps)
	}
	if got := roles(a.Transcript()); got != "user assistant tool" {
		t.Errorf("roles = %q", got)
	}
	checkValid(t, a)
}

func TestHookReplacesAssistantText(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(scripted.Step{Text: "the key is sk-123"})})
	redacted := "the key is [redacted]"
	a := newAgent(t, p, func(c *Config) {
		c.Hooks.AfterAssistantMessage = func(ctx context.Context, msg *llm.Message) MessageVerdict {
			if strings.Contains(msg.Text(), "sk-") {
				return MessageVerdict{Text: &redacted}
			}
			return MessageVerdict{}
		}
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "key?", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if got := textOf(eventsOf[*wire.AssistantMessageEvent](rec)[0].Content); got != redacted {
		t.Errorf("assistant_message = %q", got)
	}
	if got := a.Transcript()[1].Text(); got != redacted {
		t.Errorf("transcript = %q", got)
	}
}

func TestHookBlocksAssistantMessage(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		Text: "running ls", ToolCalls: []scripted.ToolCall{{Name: "ls"}},
	})})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		c.Hooks.AfterAssistantMessage = func(ctx context.Context, msg *llm.Message) MessageVerdict {
			return MessageVerdict{Block: true, Reason: "policy"}
		}
	})
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "ls", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeBlocked || ae.Error() != "assistant message blocked: policy" {
		t.Fatalf("err = %v", err)
	}
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "text_delta+",
		"tool_use_start", "tool_use_end", "usage", "turn_end")
	if len(ls.calls()) != 0 || a.MessageCount() != 0 {
		t.Errorf("ls ran %d times; %d messages kept", len(ls.calls()), a.MessageCount())
	}
}

// TestHookCancelledMeansAbort: a BeforeTool hook interrupted by an abort
// never counts as "allow".
func TestHookCancelledMeansAbort(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		ToolCalls: []scripted.ToolCall{{Name: "ls"}, {Name: "ls"}},
	})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		c.Hooks.BeforeTool = func(ctx context.Context, call ToolCall) ToolVerdict {
			cancel()
			return ToolVerdict{}
		}
	})
	rec := newRecorder(t)
	checkAborted(t, a.Prompt(ctx, "ls", nil, rec.emit))
	if len(ls.calls()) != 0 {
		t.Errorf("ls ran %d times", len(ls.calls()))
	}
	res := toolResults(rec)
	if len(res) != 2 || !res[0].IsError || !res[1].IsError {
		t.Fatalf("results = %v", rec.types())
	}
	if lastTurnEnd(t, rec).Stop != wire.StopAborted {
		t.Errorf("stop = %s", lastTurnEnd(t, rec).Stop)
	}
	checkValid(t, a)
}

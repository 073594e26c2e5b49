package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// decodeError is encoding/json's error for {"path":5} decoded into a
// struct whose path is a string: it names Go types.
func decodeError() error {
	var v struct {
		Path string `json:"path"`
	}
	return json.Unmarshal([]byte(`{"path":5}`), &v)
}

const (
	goWords    = "Go struct field"
	fieldWords = `field "path": expected a string, got a number`
)

// namesField fails the test unless text words the decoding error in JSON
// terms.
func namesField(t *testing.T, where, text string) {
	t.Helper()
	if !strings.Contains(text, fieldWords) || strings.Contains(text, goWords) || strings.Contains(text, "json: ") {
		t.Errorf("%s = %q, want it to contain %q and name no Go type", where, text, fieldWords)
	}
}

// decodingTool decodes its arguments into a struct and returns what
// encoding/json says, as a tool written with json.Unmarshal does; with
// panics set it panics with it instead.
type decodingTool struct{ panics bool }

func (*decodingTool) Name() string            { return "decode" }
func (*decodingTool) Description() string     { return "Decode arguments. Test only." }
func (*decodingTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (d *decodingTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var v struct {
		Path string `json:"path"`
	}
	err := json.Unmarshal(call.Args, &v)
	if err == nil {
		return tools.Text("ok"), nil
	}
	if d.panics {
		panic(err)
	}
	return tools.Result{}, fmt.Errorf("decoding arguments: %w", err)
}

// TestToolDecodeErrorNamesField: a tool failing with encoding/json's error
// (returned or panicked with) is reported to the model in JSON words.
func TestToolDecodeErrorNamesField(t *testing.T) {
	for _, panics := range []bool{false, true} {
		p := scripted.New(scripted.Config{Script: script(
			scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "decode", Args: `{"path":5}`}}},
			scripted.Step{Text: "ok"},
		)})
		a := newAgent(t, p, func(c *Config) { c.Tools = toolList(&decodingTool{panics: panics}) })
		rec := newRecorder(t)
		if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
		res := toolResults(rec)[0]
		if !res.IsError {
			t.Errorf("tool_result = %s, want an error", res.AppendJSON(nil))
		}
		namesField(t, fmt.Sprintf("tool_result (panics %v)", panics), textOf(res.Content))
	}
}

// TestProviderDecodeErrorNamesField: a provider failing with encoding/json's
// error, as its own error or in an *llm.Error's message, reaches
// turn_end and the error event in JSON words.
func TestProviderDecodeErrorNamesField(t *testing.T) {
	for _, perr := range []error{
		fmt.Errorf("decoding response: %w", decodeError()),
		&llm.Error{Provider: "fake", Kind: "invalid_event", Message: "decoding chunk: " + decodeError().Error()},
	} {
		p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
			return nil, perr
		})
		a := newAgent(t, p, nil)
		rec := newRecorder(t)
		err := a.Prompt(context.Background(), "x", nil, rec.emit)
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError {
			t.Fatalf("err = %v", err)
		}
		namesField(t, "error message", ae.Message)
		namesField(t, "turn_end error", lastTurnEnd(t, rec).Error)
	}
}

// TestCompactionDecodeErrorNamesField: a summarising call failing with
// encoding/json's error fails the compaction in JSON words.
func TestCompactionDecodeErrorNamesField(t *testing.T) {
	sp := &summaryProvider{summarise: func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		return nil, fmt.Errorf("decoding response: %w", decodeError())
	}}
	a := newAgent(t, sp, nil)
	promptN(t, a, 3)
	err := a.Compact(context.Background(), "", nil)
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
	namesField(t, "error message", ae.Message)
}

// TestInterceptorDecodeErrorNamesField: a fail-closed interceptor that
// could not decide because of encoding/json's error blocks the call with
// a reason in JSON words.
func TestInterceptorDecodeErrorNamesField(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "ls"}}},
		scripted.Step{Text: "ok"},
	)})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		withInterceptors(Interceptor{Name: "guard", FailClosed: true, BeforeTool: func(ctx context.Context, call ToolCall) Verdict {
			return Verdict{Err: fmt.Errorf("reading the answer: %w", decodeError())}
		}})(c)
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if len(ls.calls()) != 0 {
		t.Error("the blocked call ran")
	}
	namesField(t, "tool_result", textOf(toolResults(rec)[0].Content))
}

package sdk_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"zot.dev/zot/sdk"
)

// Middleware sees every model call and every tool call: here one logs
// each model call's step and answer, and another keeps the shell out of
// reach, so the model reads why its call failed and answers without it.
func ExampleConfig_middleware() {
	dir, _ := os.MkdirTemp("", "zot-example-")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"steps":[
		{"tool_calls":[{"name":"bash","args":{"command":"touch everything"}}]},
		{"text":"I will not do that, then."}]}]}`), 0o644)

	logCalls := func(next sdk.ModelFunc) sdk.ModelFunc {
		return func(ctx context.Context, call sdk.ModelCall, sink sdk.ModelSink) (*sdk.ModelResponse, error) {
			resp, err := next(ctx, call, sink)
			if err == nil {
				fmt.Printf("model call %d: %d tool calls, %q\n", call.Step, len(resp.Message.ToolCalls()), resp.Message.Text())
			}
			return resp, err
		}
	}
	noShell := func(next sdk.ToolFunc) sdk.ToolFunc {
		return func(ctx context.Context, run sdk.ToolRun) (sdk.ToolResult, error) {
			if run.Name == "bash" {
				fmt.Printf("refused %s %s\n", run.Name, run.Args)
				return sdk.ToolError("the shell is not available here"), nil
			}
			return next(ctx, run)
		}
	}
	rt, err := sdk.New(sdk.Config{Provider: "scripted", Script: script, CWD: dir,
		ModelMiddleware: []sdk.ModelMiddleware{logCalls},
		ToolMiddleware:  []sdk.ToolMiddleware{noShell}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	events, _ := rt.Prompt(context.Background(), "touch everything", nil)
	for range events {
	}
	// Output:
	// model call 1: 1 tool calls, ""
	// refused bash {"command":"touch everything"}
	// model call 2: 0 tool calls, "I will not do that, then."
}

package sdk_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// Runs a prompt offline on the scripted provider and prints the answer.
func ExampleRuntime_Prompt() {
	dir, _ := os.MkdirTemp("", "zot-example-")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"steps":[
		{"text":"Let me look.","tool_calls":[{"name":"ls","args":{"path":"."}}]},
		{"text":"The directory holds script.json."}]}]}`), 0o644)

	rt, err := sdk.New(sdk.Config{Provider: "scripted", Script: script, CWD: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	events, err := rt.Prompt(context.Background(), "what is here?", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range events {
		switch e := ev.(type) {
		case *wire.ToolCallEvent:
			fmt.Printf("\n[tool %s %s]\n", e.Name, e.Args)
		case *wire.TextDeltaEvent:
			fmt.Print(e.Delta)
		case *wire.DoneEvent:
			fmt.Println("\n[done]")
		}
	}
	// Output:
	// Let me look.
	// [tool ls {"path":"."}]
	// The directory holds script.json.
	// [done]
}

// Every event marshals to the line `zot rpc` prints for it.
func ExampleRuntime_Prompt_wire() {
	dir, _ := os.MkdirTemp("", "zot-example-")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"Hi.","chunk":16}]}]}`), 0o644)
	rt, _ := sdk.New(sdk.Config{Provider: "scripted", Script: script, CWD: dir})
	defer rt.Close()
	events, _ := rt.Prompt(context.Background(), "hello", nil)
	for ev := range events {
		if d, ok := ev.(*wire.DoneEvent); ok && d.Result != nil {
			d.Result.DurationMs = 0 // the one field that differs from run to run
		}
		if ev.Type() == wire.TypeTextDeltaEvent || ev.Type() == wire.TypeDoneEvent {
			fmt.Println(string(ev.AppendJSON(nil)))
		}
	}
	// Output:
	// {"type":"text_delta","seq":4,"delta":"Hi."}
	// {"type":"done","seq":8,"result":{"stop":"end_turn","text":"Hi.","turns":1,"tool_calls":0,"duration_ms":0,"usage":{"input":357,"output":1,"cache_read":0,"cache_write":0,"cost_usd":0.000362}}}
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// TestFleetSDKTool: a Go function a program registered as a tool
// (sdk.Runtime.RegisterTools) is offered on the fleet and runs in the
// program, once per call; the program sees the same events as in
// process.
func TestFleetSDKTool(t *testing.T) {
	var got results
	f := newFleet(t, got.model("lookup", `{"key":"color"}`))
	t.Setenv("ZOT_HOME", f.home)
	f.worker("w1")
	var calls atomic.Int32
	lookup := client.Tool{Name: "lookup", Description: "look a key up in the program",
		Schema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`),
		Run: func(_ context.Context, args json.RawMessage) (client.ToolResult, error) {
			calls.Add(1)
			return client.ToolResult{Text: "the color is blue"}, nil
		}}
	run := func(name string, fleet *sdk.Fleet) []string {
		work := filepath.Join(f.dir, "sdk-work")
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		log := &syncBuffer{}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s's log:\n%s", name, log.String())
			}
		})
		rt, err := sdk.New(sdk.Config{Provider: "anthropic", BaseURL: f.model.url, APIKey: "test-key", CWD: work, Log: log, Fleet: fleet})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer rt.Close()
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		if _, err := rt.RegisterTools(ctx, lookup); err != nil {
			t.Fatalf("%s: RegisterTools: %v", name, err)
		}
		ch, err := rt.Prompt(ctx, "use the tool", nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var events []string
		for ev := range ch {
			switch e := ev.(type) { // what differs from run to run: when, how long
			case *wire.DoneEvent:
				if e.Result != nil {
					e.Result.DurationMs = 0
				}
			case *wire.UserMessageEvent:
				e.Time = ""
			case *wire.AssistantMessageEvent:
				e.Time = ""
			}
			events = append(events, string(ev.AppendJSON(nil)))
		}
		return events
	}
	want := run("inprocess", nil)
	fleetEvents := run("fleet", &sdk.Fleet{Binary: f.tl.fleet, Temporal: f.addr(), Blobs: f.blobs})
	if !slices.Equal(want, fleetEvents) {
		t.Errorf("events differ:\nin process:\n%s\nfleet:\n%s", strings.Join(want, "\n"), strings.Join(fleetEvents, "\n"))
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the program's tool ran %d times for two prompts, want 2", n)
	}
	if !strings.Contains(got.String(), "the color is blue") {
		t.Errorf("the model was given %q, want the tool's answer", got.String())
	}
}

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

// toolScript: the first prompt calls weather for Oslo, the second with
// arguments that do not decode, the third calls a tool that fails, the
// fourth calls the tool that waits until its call is ended.
var toolScript = map[string]any{"turns": []any{
	toolTurn("weather", map[string]any{"city": "Oslo"}),
	toolTurn("weather", map[string]any{"city": 5}),
	toolTurn("failing", map[string]any{}),
	toolTurn("waits", map[string]any{}),
}}

func toolTurn(name string, args map[string]any) map[string]any {
	return map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": name, "args": args}}},
		map[string]any{"text": "done"},
	}}
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city's name"`
}

// TestToolsOneShape: Go functions registered as tools run when the model
// calls them, alike in process and over zot rpc: a typed tool gets its
// input decoded (arguments that do not decode are an error the model
// sees), an error is a failed call, a cancel ends a call under way; a
// taken name is name_taken, an unknown one not_found.
func TestToolsOneShape(t *testing.T) {
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	data, _ := json.Marshal(toolScript)
	if err := os.WriteFile(scriptFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("sdk.Runtime", func(t *testing.T) {
		rt, err := sdk.New(sdk.Config{Provider: "scripted", Script: scriptFile, CWD: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		toolScenario(t, rt)
	})
	t.Run("rpcclient.Client", func(t *testing.T) {
		c, err := rpcclient.Start(context.Background(), rpcclient.Options{Bin: zotBin, Args: []string{"--provider", "scripted", "--script", scriptFile, "--cwd", t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		toolScenario(t, c)
	})
}

func toolScenario(t *testing.T, c client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	defer c.Close()

	weather := client.MustTool("weather", "The weather in a city.", func(ctx context.Context, in weatherIn) (string, error) {
		return "fog in " + in.City, nil
	})
	failing := client.MustTool("failing", "Always fails.", func(ctx context.Context, in struct{}) (string, error) {
		return "", errors.New("the weather service is down")
	})
	ended := make(chan error, 1)
	started := make(chan struct{})
	waits := client.Tool{Name: "waits", ReadOnly: true, Run: func(ctx context.Context, _ json.RawMessage) (client.ToolResult, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return client.ToolResult{}, ctx.Err()
	}}
	if _, err := c.RegisterTools(ctx, weather, client.Tool{Name: "bash", Run: waits.Run}); wire.CodeOf(err) != wire.CodeNameTaken {
		t.Errorf("registering bash: %v, want name_taken", err)
	}
	names, err := c.RegisterTools(ctx, weather, failing, waits)
	if err != nil || strings.Join(names, ",") != "failing,waits,weather" {
		t.Fatalf("RegisterTools: %v, %v", names, err)
	}

	result := func(what string) *wire.ToolResultEvent {
		t.Helper()
		evs := drain(t, must(c.Prompt(ctx, what, nil)))
		tr, ok := find[*wire.ToolResultEvent](evs)
		if !ok {
			t.Fatalf("%s: no tool_result in %v", what, types(evs))
		}
		return tr
	}
	if tr := result("weather in Oslo"); tr.IsError || textOf(tr.Content) != "fog in Oslo" {
		t.Errorf("weather: %+v %q", tr.IsError, textOf(tr.Content))
	}
	if tr := result("bad arguments"); !tr.IsError || !strings.Contains(textOf(tr.Content), "invalid arguments") {
		t.Errorf("bad arguments: %+v %q", tr.IsError, textOf(tr.Content))
	}
	if tr := result("failing"); !tr.IsError || textOf(tr.Content) != "the weather service is down" {
		t.Errorf("failing: %+v %q", tr.IsError, textOf(tr.Content))
	}

	ch := must(c.Prompt(ctx, "waits", nil))
	<-started
	if _, err := c.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	wantAborted(t, "a cancelled tool call", drain(t, ch))
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the tool's context ended with %v", err)
	}

	if _, err := c.UnregisterTools(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unregistering nope: %v", err)
	}
	if left, err := c.UnregisterTools(ctx, "failing"); err != nil || strings.Join(left, ",") != "waits,weather" {
		t.Errorf("UnregisterTools: %v, %v", left, err)
	}
	if left, err := c.UnregisterTools(ctx); err != nil || len(left) != 0 {
		t.Errorf("UnregisterTools all: %v, %v", left, err)
	}
}

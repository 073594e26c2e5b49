package rpcclient

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk/wire"
)

// permissionScript calls write, then bash, then answers.
var permissionScript = map[string]any{"turns": []any{map[string]any{"steps": []any{
	map[string]any{"tool_calls": []any{map[string]any{"name": "write", "args": map[string]any{"path": "a.txt", "content": "x"}}}},
	map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "echo hi"}}}},
	map[string]any{"text": "done"},
}}}}

// TestOnPermissionRequest: with zot --approve, OnPermissionRequest is
// asked about each write and bash call and its answers decide what runs;
// the requests also reach the prompt's stream.
func TestOnPermissionRequest(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var asked []string
	c, err := Start(context.Background(), Options{
		Bin:    zotBin,
		Args:   []string{"--provider", "scripted", "--cwd", dir, "--script", writeScript(t, permissionScript), "--approve"},
		Env:    cleanEnv(),
		Stderr: &zotbin.Buffer{},
		OnPermissionRequest: func(ctx context.Context, req *wire.PermissionRequestEvent) PermissionAnswer {
			mu.Lock()
			asked = append(asked, req.Tool)
			mu.Unlock()
			if req.Tool == "bash" {
				return PermissionAnswer{Decision: wire.PermissionDecisionReject, Reason: "no shell today"}
			}
			return PermissionAnswer{Decision: wire.PermissionDecisionAllowOnce}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.PromptStream(ctx(t), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s)
	var requests int
	var results []*wire.ToolResultEvent
	for _, ev := range evs {
		switch e := ev.(type) {
		case *wire.PermissionRequestEvent:
			requests++
		case *wire.ToolResultEvent:
			results = append(results, e)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(asked, ",") != "write,bash" || requests != 2 {
		t.Errorf("asked %v, %d requests in the stream", asked, requests)
	}
	if len(results) != 2 || results[0].IsError || !results[1].IsError || !strings.Contains(string(results[1].AppendJSON(nil)), "no shell today") {
		t.Fatalf("results %v", results)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("the allowed write did not run: %v", err)
	}
}

// TestAnswerPermission: without a callback, the client reads the request
// from the stream and answers it itself; a second answer is refused.
func TestAnswerPermission(t *testing.T) {
	c := startZot(t, nil, "--script", writeScript(t, permissionScript), "--approve")
	s, err := c.PromptStream(ctx(t), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	var results int
	for ev, err := range s.All(ctx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *wire.PermissionRequestEvent:
			if err := c.AnswerPermission(ctx(t), e.RequestID, wire.PermissionDecisionAllowAlways, ""); err != nil {
				t.Fatal(err)
			}
			err := c.AnswerPermission(ctx(t), e.RequestID, wire.PermissionDecisionAllowOnce, "")
			wantCode(t, err, wire.CodeUnknownRequest, "answer_permission")
		case *wire.ToolResultEvent:
			results++
			if e.IsError {
				t.Errorf("an allowed call failed: %s", e.AppendJSON(nil))
			}
		}
	}
	if results != 2 {
		t.Errorf("%d results", results)
	}
}

// TestSavedAnswer: an OnPermissionRequest answer with Save keeps the
// request's rule in the zot home's config.json, and the next zot in the
// folder runs the call without asking.
func TestSavedAnswer(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	script := writeScript(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "echo saved"}}}},
		map[string]any{"text": "done"},
	}}}})
	run := func() (asked []string) {
		var mu sync.Mutex
		c, err := Start(context.Background(), Options{
			Bin:    zotBin,
			Args:   []string{"--provider", "scripted", "--cwd", dir, "--script", script, "--approve"},
			Env:    append(cleanEnv(), "ZOT_HOME="+home),
			Stderr: &zotbin.Buffer{},
			OnPermissionRequest: func(ctx context.Context, req *wire.PermissionRequestEvent) PermissionAnswer {
				mu.Lock()
				asked = append(asked, req.Rule)
				mu.Unlock()
				return PermissionAnswer{Decision: wire.PermissionDecisionAllowAlways, Save: "project"}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := c.PromptStream(ctx(t), "go", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range collect(t, s) {
			if r, ok := ev.(*wire.ToolResultEvent); ok && r.IsError {
				t.Errorf("the call failed: %s", r.AppendJSON(nil))
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return asked
	}
	if asked := run(); len(asked) != 1 || asked[0] != "bash(echo saved *)" {
		t.Fatalf("first session asked %q", asked)
	}
	if asked := run(); len(asked) != 0 {
		t.Fatalf("the second session asked %q after the saved answer", asked)
	}
}

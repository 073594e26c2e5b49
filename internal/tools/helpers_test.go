package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
)

// toolByName returns the built-in tool name configured with cfg.
func toolByName(t testing.TB, cfg Config, name string) Tool {
	t.Helper()
	for _, tl := range Builtins(cfg) {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no built-in tool %q", name)
	return nil
}

// runTool runs tool with args (any JSON-encodable value or a JSON string)
// under a background context and fails the test on a Go error.
func runTool(t *testing.T, tl Tool, args any) Result {
	t.Helper()
	return runToolCtx(t, context.Background(), tl, args)
}

func runToolCtx(t *testing.T, ctx context.Context, tl Tool, args any) Result {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("encoding args: %v", err)
		}
		raw = b
	}
	res, err := tl.Run(ctx, Call{ID: "call-1", Args: raw})
	if err != nil {
		t.Fatalf("%s.Run: unexpected error: %v", tl.Name(), err)
	}
	return res
}

// textOf joins the text blocks of r.
func textOf(r Result) string {
	var sb strings.Builder
	for _, b := range r.Content {
		if tb, ok := b.(*llm.TextBlock); ok {
			sb.WriteString(tb.Text)
		}
	}
	return sb.String()
}

// wantOK fails unless r is a success.
func wantOK(t *testing.T, r Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", textOf(r))
	}
	return textOf(r)
}

// wantErr fails unless r is an error result containing every fragment.
func wantErr(t *testing.T, r Result, fragments ...string) string {
	t.Helper()
	text := textOf(r)
	if !r.IsError {
		t.Fatalf("expected an error result, got: %s", text)
	}
	for _, f := range fragments {
		if !strings.Contains(text, f) {
			t.Errorf("error %q does not mention %q", text, f)
		}
	}
	return text
}

// writeFiles creates files under dir from a map of slash paths to content.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

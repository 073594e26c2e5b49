package sdk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// writeTwice writes a.txt in the first prompt and b.txt in the second.
const writeTwice = `{"turns":[
	{"steps":[{"tool_calls":[{"name":"write","args":{"path":"a.txt","content":"x"}}]},{"text":"ok"}]},
	{"steps":[{"tool_calls":[{"name":"write","args":{"path":"b.txt","content":"y"}}]},{"text":"ok"}]}]}`

// toolErrors runs one prompt and returns, per tool result, whether it
// failed.
func toolErrors(t *testing.T, rt *Runtime) []bool {
	t.Helper()
	ch, err := rt.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []bool
	for _, ev := range drain(t, ch) {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			out = append(out, r.IsError)
		}
	}
	return out
}

// TestSetMode: a runtime starts in auto; SetMode(read_only) refuses the
// next write without asking; SetMode(ask) hands it to Approve.
func TestSetMode(t *testing.T) {
	var asked []string
	rt := newScripted(t, writeTwice, Config{})
	if rt.Mode() != ModeAuto {
		t.Fatalf("first mode %q, want auto", rt.Mode())
	}
	if err := rt.SetMode(context.Background(), ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	if got := toolErrors(t, rt); len(got) != 1 || !got[0] {
		t.Errorf("read_only: results %v, want one refused", got)
	}
	if _, err := os.Stat(filepath.Join(rt.CWD(), "a.txt")); err == nil {
		t.Error("read_only let the write run")
	}
	if err := rt.SetMode(context.Background(), ModeAuto); err != nil {
		t.Fatal(err)
	}
	if got := toolErrors(t, rt); len(got) != 1 || got[0] {
		t.Errorf("auto: results %v, want one that ran", got)
	}
	var me *ModeError
	if err := rt.SetMode(context.Background(), "never"); !errors.As(err, &me) {
		t.Errorf("unknown mode: %v", err)
	}

	asking := newScripted(t, writeTwice, Config{Approve: func(_ context.Context, req ApprovalRequest) Approval {
		asked = append(asked, req.Tool)
		return Approval{Decision: AllowOnce}
	}})
	if asking.Mode() != ModeAsk {
		t.Errorf("with Approve the first mode is %q, want ask", asking.Mode())
	}
	if got := toolErrors(t, asking); len(got) != 1 || got[0] || strings.Join(asked, ",") != "write" {
		t.Errorf("ask: results %v, asked %v", got, asked)
	}
}

// TestPermissionDeny: Config.Permission "deny" is read_only, and no
// other mode can be chosen.
func TestPermissionDeny(t *testing.T) {
	rt := newScripted(t, writeTwice, Config{Permission: "deny"})
	if rt.Mode() != ModeReadOnly || len(rt.Modes()) != 1 {
		t.Fatalf("mode %q of %v", rt.Mode(), rt.Modes())
	}
	if err := rt.SetMode(context.Background(), ModeAuto); err == nil {
		t.Error("left read_only under deny")
	}
	if got := toolErrors(t, rt); len(got) != 1 || !got[0] {
		t.Errorf("deny: results %v, want one refused", got)
	}
	if _, err := New(Config{Provider: "scripted", Permission: "sometimes"}); err == nil || !strings.Contains(err.Error(), "Permission") {
		t.Errorf("a bad Permission: %v", err)
	}
}

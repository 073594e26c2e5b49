package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/wire"
)

// TestErrorsCarryCodes: every refusal of a Session or Host carries the
// protocol code the doors answer with (wire.CodeOf), so no door has to
// recognise the engine's errors itself.
func TestErrorsCarryCodes(t *testing.T) {
	s := newSession(t, slowScript, nil)
	c := newCollector()
	level := "xhigh"
	_, badDir := s.host.NewSession(SessionConfig{Provider: "scripted", CWD: filepath.Join(t.TempDir(), "missing")})
	if !errors.Is(badDir, ErrWorkDir) {
		t.Errorf("a missing working directory: %v does not match ErrWorkDir", badDir)
	}
	for _, tc := range []struct {
		name string
		err  error
		want wire.ErrorCode
	}{
		{"empty prompt", s.Submit(Work{Prompt: &PromptInput{}, Sink: c.sink}, Queue, nil), wire.CodeInvalidParams},
		{"empty model id", s.SetModel(""), wire.CodeUnknownModel},
		{"reasoning level", s.SetModelReasoning("scripted", &level), wire.CodeInvalidParams},
		{"no approval request", s.AnswerApproval("perm-1", Approval{Decision: AllowOnce}), wire.CodeUnknownRequest},
		{"unknown mode", s.SetMode("yolo"), wire.CodeInvalidParams},
		{"missing working directory", badDir, wire.CodeInvalidParams},
	} {
		if got := wire.CodeOf(tc.err); got != tc.want {
			t.Errorf("%s: %v has code %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
	if err := s.Submit(prompt("p", "hi", c.sink), RefuseBusy, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Clear(); wire.CodeOf(err) != wire.CodeBusy {
		t.Errorf("clear while busy: %v has code %q", err, wire.CodeOf(err))
	}
	c.waitDone(t)
}

// TestErrorEventCode: the error event of failed work carries the code
// wire.CodeOf gives its error, as every door's answers do: the agent's
// errors keep theirs (and their own message), an error of another
// package that carries a code keeps it wherever it is wrapped, and one
// that carries none is internal.
func TestErrorEventCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code wire.ErrorCode
		msg  string
	}{
		{"agent", &agent.Error{Code: wire.CodeProviderError, Message: "HTTP 503"}, wire.CodeProviderError, "HTTP 503"},
		{"agent, wrapped", fmt.Errorf("step 3: %w", &agent.Error{Code: wire.CodeMaxSteps, Message: "stopped after 3 steps"}), wire.CodeMaxSteps, "stopped after 3 steps"},
		{"panic", &agent.Error{Code: wire.CodeInternal, Message: "internal error: boom"}, wire.CodeInternal, "internal error: boom"},
		{"sentinel of another package", fmt.Errorf("tool server: %w", mcphost.ErrUnknownServer), wire.CodeNotFound, "tool server: no MCP server of that name"},
		{"typed error of another package", &mcphost.ConfigError{Err: errors.New("an MCP server has no name")}, wire.CodeInvalidParams, "an MCP server has no name"},
		{"no code", errors.New("disk full"), wire.CodeInternal, "disk full"},
	} {
		ev := errorEvent(tc.err)
		if ev.Code != tc.code || ev.Message != tc.msg {
			t.Errorf("%s: error event {%q, %q}, want {%q, %q}", tc.name, ev.Code, ev.Message, tc.code, tc.msg)
		}
	}
}

package engine

import (
	"errors"
	"path/filepath"
	"testing"

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

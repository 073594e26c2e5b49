package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestModesDecideBeforeAsking: each mode settles write and bash as it
// says before the door is asked; only what it leaves comes as a
// permission_request.
func TestModesDecideBeforeAsking(t *testing.T) {
	for _, tc := range []struct {
		mode  PermissionMode
		asked []string // the tools the door is asked about
		errs  []bool   // per result (write, bash): refused
	}{
		{ModeAsk, []string{"write", "bash"}, []bool{false, false}},
		{ModeAcceptEdits, []string{"bash"}, []bool{false, false}},
		{ModeAuto, nil, []bool{false, false}},
		{ModeReadOnly, nil, []bool{true, true}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s := newSession(t, writeScript, func(c *SessionConfig) { c.AnswerApprovals = true })
			if s.Mode() != ModeAsk {
				t.Fatalf("first mode %q, want ask (the door answers)", s.Mode())
			}
			if err := s.SetMode(tc.mode); err != nil {
				t.Fatal(err)
			}
			r := newRequests()
			if err := s.Submit(prompt("p1", "go", r.sink), Queue, nil); err != nil {
				t.Fatal(err)
			}
			for _, tool := range tc.asked {
				req := r.next(t)
				if req.Tool != tool {
					t.Errorf("asked about %s, want %s", req.Tool, tool)
				}
				if err := s.AnswerApproval(req.RequestID, Approval{Decision: AllowOnce}); err != nil {
					t.Fatal(err)
				}
			}
			r.waitDone(t)
			res := results(r.events())
			if len(res) != 2 {
				t.Fatalf("%d results", len(res))
			}
			for i, want := range tc.errs {
				if res[i].IsError != want {
					t.Errorf("result %d refused=%v, want %v: %s", i, res[i].IsError, want, res[i].AppendJSON(nil))
				}
			}
			if tc.mode == ModeReadOnly && !strings.Contains(string(res[0].AppendJSON(nil)), "read-only mode") {
				t.Errorf("refusal does not say why: %s", res[0].AppendJSON(nil))
			}
			if len(r.asked) != 0 {
				t.Errorf("%d more requests", len(r.asked))
			}
		})
	}
}

// TestModeDefaultsAndLock: without anybody to answer a session starts in
// auto; a locked read_only session offers no other mode; an unknown mode
// is refused; ask without an answerer refuses instead of waiting.
func TestModeDefaultsAndLock(t *testing.T) {
	s := newSession(t, writeScript, nil)
	if s.Mode() != ModeAuto || len(s.Modes()) != 4 {
		t.Errorf("mode %q, %d modes; want auto of 4", s.Mode(), len(s.Modes()))
	}
	if !s.RunsUnasked("write") {
		t.Error("auto does not run write unasked")
	}
	var me *ModeError
	if err := s.SetMode("sometimes"); !errors.As(err, &me) {
		t.Errorf("unknown mode: %v", err)
	}
	if err := s.SetMode(ModeAsk); err != nil {
		t.Fatal(err)
	}
	if s.RunsUnasked("write") || !s.RunsUnasked("read") {
		t.Error("ask: write runs unasked, or read does not")
	}
	c := newCollector()
	if err := s.Submit(prompt("p1", "go", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	res := results(c.events())
	if len(res) != 2 || !res[0].IsError || !strings.Contains(string(res[0].AppendJSON(nil)), "nobody can answer") {
		t.Errorf("ask without an answerer: %v", res)
	}

	locked := newSession(t, writeScript, func(c *SessionConfig) { c.Mode, c.LockMode = ModeReadOnly, true })
	if m := locked.Modes(); len(m) != 1 || m[0].ID != ModeReadOnly {
		t.Errorf("locked modes %v", m)
	}
	if err := locked.SetMode(ModeAuto); !errors.As(err, &me) || !strings.Contains(err.Error(), "--permission deny") {
		t.Errorf("leaving a locked mode: %v", err)
	}
	if err := locked.SetMode(ModeReadOnly); err != nil {
		t.Errorf("staying in the locked mode: %v", err)
	}
}

// TestModeOfPermission maps the command line's policies.
func TestModeOfPermission(t *testing.T) {
	for policy, want := range map[string]PermissionMode{"ask": ModeAsk, "allow": ModeAuto, "deny": ModeReadOnly} {
		got, locked, err := ModeOfPermission(policy)
		if err != nil || got != want || locked != (policy == "deny") {
			t.Errorf("%s: %q %v %v", policy, got, locked, err)
		}
	}
	if _, _, err := ModeOfPermission("maybe"); err == nil {
		t.Error("an unknown policy was taken")
	}
}

package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/settings"
	"zot.dev/zot/sdk/wire"
)

// rulesScript runs two bash commands and a read, then answers.
const rulesScript = `{"turns":[{"steps":[
	{"tool_calls":[{"id":"b1","name":"bash","args":{"command":"echo allowed"}}]},
	{"tool_calls":[{"id":"b2","name":"bash","args":{"command":"echo other"}}]},
	{"tool_calls":[{"id":"r1","name":"read","args":{"path":"secret.txt"}}]},
	{"text":"ok"}]}]}`

// runRules runs rulesScript in mode with the rules given, every request
// answered by answer, and returns what each call's result says, by call
// id, with "error: " before a refusal, and the tools asked for.
func runRules(t *testing.T, mode PermissionMode, p PermissionRules, answer func(ApprovalRequest) Approval) (map[string]string, []string) {
	t.Helper()
	var asked []string
	s := newSession(t, rulesScript, func(c *SessionConfig) {
		c.Mode = mode
		c.Permissions = p
		c.Approve = func(_ context.Context, req ApprovalRequest) Approval {
			asked = append(asked, req.Tool+":"+string(req.Args))
			return answer(req)
		}
	})
	os.WriteFile(filepath.Join(s.cwd, "secret.txt"), []byte("s3cret"), 0o600)
	c := newCollector()
	if err := s.Submit(prompt("p", "go", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	out := map[string]string{}
	for _, ev := range c.events() {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			text := string(r.AppendJSON(nil))
			if r.IsError {
				text = "error: " + text
			}
			out[r.ID] = text
		}
	}
	return out, asked
}

// TestRulesBeforeModeAndAsking: a deny rule refuses its calls in every
// mode, also auto, and for tools the approval does not cover (read); an
// allow rule runs its calls unasked where the mode would ask, but not in
// read_only; what no rule covers is left to the mode and the approver.
func TestRulesBeforeModeAndAsking(t *testing.T) {
	rules := PermissionRules{Allow: []string{"bash(echo allowed)"}, Deny: []string{"read(secret.txt)"}}
	once := func(ApprovalRequest) Approval { return Approval{Decision: AllowOnce} }

	res, asked := runRules(t, ModeAsk, rules, once)
	if strings.HasPrefix(res["b1"], "error") || strings.HasPrefix(res["b2"], "error") {
		t.Errorf("ask: %v", res)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "echo other") {
		t.Errorf("ask: asked %v, want only echo other", asked)
	}
	if !strings.Contains(res["r1"], "denied by the permission rule read(secret.txt) in the session's configuration") || strings.Contains(res["r1"], "s3cret") {
		t.Errorf("ask: read %s", res["r1"])
	}

	res, asked = runRules(t, ModeAuto, rules, once)
	if len(asked) != 0 || !strings.HasPrefix(res["r1"], "error") || strings.HasPrefix(res["b2"], "error") {
		t.Errorf("auto: asked %v, results %v", asked, res)
	}

	res, asked = runRules(t, ModeReadOnly, rules, once)
	if len(asked) != 0 || !strings.HasPrefix(res["b1"], "error") || !strings.Contains(res["b1"], "read-only") {
		t.Errorf("read_only: an allow rule ran a call: asked %v, results %v", asked, res)
	}

	h := NewHost(HostConfig{})
	defer h.Close()
	if _, err := h.NewSession(SessionConfig{Provider: "scripted", Permissions: PermissionRules{Deny: []string{"bash("}}}); err == nil || !strings.Contains(err.Error(), "Permissions") {
		t.Errorf("a rule that does not parse: %v", err)
	}
}

// TestApproverSavesRule: an Approver's AllowAlways with Save keeps its
// rule (in place of the request's suggestion) in the home's config.json,
// and the session runs the calls it matches unasked from then on.
func TestApproverSavesRule(t *testing.T) {
	home := t.TempDir()
	p := PermissionRules{Home: home}
	var rules []string
	res, asked := runRules(t, ModeAsk, p, func(req ApprovalRequest) Approval {
		rules = append(rules, req.Rule)
		return Approval{Decision: AllowAlways, Save: settings.ScopeEverywhere, Rule: "bash(echo *)"}
	})
	if len(asked) != 1 || rules[0] != "bash(echo allowed *)" || strings.HasPrefix(res["b2"], "error") {
		t.Fatalf("asked %v with rules %v, results %v", asked, rules, res)
	}
	c, err := settings.LoadConfig(settings.ConfigFile(home))
	if err != nil || len(c.Permissions.Allow) != 1 || c.Permissions.Allow[0] != "bash(echo *)" {
		t.Fatalf("config.json: %+v %v", c, err)
	}
}

package subagent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseProfile(t *testing.T) {
	// A profile in the shape other agents write theirs: tools as a
	// comma-separated string in their case, a key zot does not know.
	p, err := Parse("x/reviewer.md", []byte("---\ndescription: >\n  Reviews a diff\n  for bugs.\ntools: Read, Grep, Bash, Glob\nmodel: inherit\ncolor: blue\n---\n\nLook hard.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "reviewer" || p.Description != "Reviews a diff for bugs." || strings.Join(p.Tools, ",") != "read,grep,bash,find" || p.Model != "" || p.Instructions != "Look hard." {
		t.Errorf("profile: %+v", p)
	}
	if p, err := Parse("x/a.md", []byte("---\nname: other\ndescription: d\nmodel: sonnet\n---\n")); err != nil || p.Name != "other" || p.Tools != nil || p.Model != "" {
		t.Errorf("named profile: %+v %v", p, err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"no description", "---\nname: a\n---\nbody", "x/a.md:1: description: required"},
		{"bad name", "---\nname: Big Name\ndescription: d\n---\n", `x/a.md:2: name: "Big Name" is not a profile name`},
		{"tools not strings", "---\ndescription: d\ntools:\n  - a: b\n---\n", "x/a.md:4: tools: list items must be strings"},
		{"unclosed", "---\ndescription: d\n", "never closed"},
		{"no front matter", "just text", "description: required"},
	} {
		_, err := Parse("x/a.md", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadShadowsAndReports(t *testing.T) {
	project, user := t.TempDir(), t.TempDir()
	write(t, project, "explore.md", "---\ndescription: the project's explorer\n---\n")
	write(t, user, "explore.md", "---\ndescription: the user's explorer\n---\n")
	write(t, user, "tester.md", "---\ndescription: runs tests\ntools: [bash, read]\n---\nRun them.")
	write(t, user, "broken.md", "---\nname: broken\n---\n")
	write(t, user, "notes.txt", "not a profile")
	list, problems := Load([]Dir{{Path: project, Source: SourceProject}, {Path: user, Source: SourceUser}, {Path: filepath.Join(user, "missing"), Source: SourceUser}})
	if len(list) != 2 || list[0].Name != "explore" || list[0].Source != SourceProject || list[0].Description != "the project's explorer" || list[1].Name != "tester" || list[1].Source != SourceUser {
		t.Errorf("profiles: %+v", list)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "broken.md") {
		t.Errorf("problems: %v", problems)
	}
}

func TestToolRunsTheChild(t *testing.T) {
	profiles := []Profile{{Name: "explore", Description: "Finds things.", Tools: []string{"read", "grep"}, Model: "small"}}
	var got Request
	run := func(ctx context.Context, req Request, progress func(string)) (Outcome, error) {
		got = req
		progress("step 1\n")
		if req.Prompt == "fail" {
			return Outcome{Result: &wire.PromptResult{Stop: wire.StopError}, Error: "boom"}, nil
		}
		if req.Prompt == "refuse" {
			return Outcome{}, &RefusedError{Reason: "too many"}
		}
		return Outcome{Result: &wire.PromptResult{Stop: wire.StopEndTurn, Text: "found it", Turns: 2}}, nil
	}
	tool := NewTool(run, profiles)
	if d := tool.Description(); !strings.Contains(d, "- explore: Finds things. (tools: read, grep)") || !strings.Contains(d, "- general:") {
		t.Errorf("the description does not list the profiles:\n%s", d)
	}
	var schema struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil || strings.Join(schema.Properties["agent"].Enum, ",") != "general,explore" {
		t.Errorf("schema: %s", tool.Schema())
	}
	if !tools.IsReadOnly(tool) || !tools.IsConcurrent(tool) {
		t.Errorf("the task tool must be read-only and concurrent")
	}
	var progress strings.Builder
	call := func(args string) tools.Result {
		t.Helper()
		res, err := tool.Run(context.Background(), tools.Call{ID: "c", Args: json.RawMessage(args), Progress: func(s string) { progress.WriteString(s) }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(r tools.Result) string {
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.(*llm.TextBlock).Text)
		}
		return b.String()
	}
	res := call(`{"description":"look","prompt":"find x","agent":"explore"}`)
	if res.IsError || text(res) != `{"stop":"end_turn","text":"found it","turns":2,"tool_calls":0,"duration_ms":0,"usage":{"input":0,"output":0,"cache_read":0,"cache_write":0,"cost_usd":0}}` {
		t.Errorf("result: %v %s", res.IsError, text(res))
	}
	if got.CallID != "c" || got.Agent == nil || got.Agent.Name != "explore" || got.Model != "small" || got.Description != "look" {
		t.Errorf("request: %+v", got)
	}
	if progress.String() != "step 1\n" {
		t.Errorf("progress: %q", progress.String())
	}
	if call(`{"description":"d","prompt":"p","model":"big"}`); got.Agent != nil || got.Model != "big" {
		t.Errorf("a general request with a model: %+v", got)
	}
	for args, want := range map[string]string{
		`{"description":"d","prompt":"fail"}`:             "it stopped with error: boom",
		`{"description":"d","prompt":"refuse"}`:           "too many",
		`{"description":"d","prompt":" "}`:                `"prompt" is required`,
		`{"description":"d","prompt":"p","agent":"nope"}`: `unknown agent "nope"; the agents are: general, explore`,
		`{"description":"d","prompt":"p","extra":1}`:      `unknown field "extra"`,
	} {
		if r := call(args); !r.IsError || !strings.Contains(text(r), want) {
			t.Errorf("%s: %v %q, want an error with %q", args, r.IsError, text(r), want)
		}
	}
}

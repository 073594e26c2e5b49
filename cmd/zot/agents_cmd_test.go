package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestAgentsListAndShow: zot agents list names each profile with where it
// was found, the project's .zot/agents winning a name over its
// .claude/agents (listed as shadowed), the zot home's after them, and the
// files that could not be read; show prints one with its instructions.
func TestAgentsListAndShow(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	write := func(path, text string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zotTester := filepath.Join(proj, ".zot", "agents", "tester.md")
	claudeTester := filepath.Join(proj, ".claude", "agents", "tester.md")
	reviewer := filepath.Join(home, "agents", "reviewer.md")
	write(zotTester, "---\nname: tester\ndescription: Runs the tests.\ntools: Read, Bash\n---\nRun each test twice.\n")
	write(claudeTester, "---\nname: tester\ndescription: Claude Code's tester.\n---\nRun them.\n")
	write(reviewer, "---\nname: reviewer\ndescription: Reviews a diff.\n---\nSay what is wrong.\n")
	write(filepath.Join(home, "agents", "broken.md"), "---\nname: broken\n---\nno description\n")
	env := []string{"ZOT_HOME=" + home}

	out, errOut, code := runExt(t, env, proj, "agents", "list", "--json")
	var list agentsListJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("zot agents list --json: exit %d\n%s%s", code, out, errOut)
	}
	if len(list.Agents) != 2 || list.Agents[0].Name != "reviewer" || list.Agents[0].Source != "user" || list.Agents[0].Path != reviewer ||
		list.Agents[1].Name != "tester" || list.Agents[1].Source != "project" || list.Agents[1].Path != zotTester || strings.Join(list.Agents[1].Tools, ",") != "read,bash" {
		t.Errorf("agents: %+v", list.Agents)
	}
	if len(list.Shadowed) != 1 || list.Shadowed[0].Path != claudeTester || list.Shadowed[0].ShadowedBy != zotTester {
		t.Errorf("shadowed: %+v", list.Shadowed)
	}
	if len(list.Problems) != 1 || !strings.Contains(list.Problems[0], "broken.md") || !strings.Contains(list.Problems[0], "description") {
		t.Errorf("problems: %v", list.Problems)
	}
	out, _, code = runExt(t, env, proj, "agents", "list")
	if code != 0 || !strings.Contains(out, "tester (project, "+zotTester+")") || !strings.Contains(out, "shadowed: tester (project, "+claudeTester+"), by "+zotTester) {
		t.Errorf("zot agents list:\n%s", out)
	}
	out, _, code = runExt(t, env, proj, "agents", "show", "tester")
	if code != 0 || !strings.Contains(out, "Runs the tests.") || !strings.Contains(out, "tools        read, bash") || !strings.Contains(out, "Run each test twice.") {
		t.Errorf("zot agents show tester: exit %d\n%s", code, out)
	}
	var one agentJSON
	out, _, code = runExt(t, env, proj, "agents", "show", "reviewer", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.Instructions != "Say what is wrong." || one.Source != "user" {
		t.Errorf("zot agents show reviewer --json: exit %d\n%s", code, out)
	}
	if _, errOut, code := runExt(t, env, proj, "agents", "show", "nobody"); code != 1 || !strings.Contains(errOut, `"nobody"`) {
		t.Errorf("zot agents show nobody: exit %d\n%s", code, errOut)
	}
}

// TestSlashAgents: /agents lists the profiles the task tool offers with
// where each was found and those shadowed; /agents NAME shows one; a
// name it does not know is refused.
func TestSlashAgents(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	zotTester := filepath.Join(cwd, ".zot", "agents", "tester.md")
	claudeTester := filepath.Join(cwd, ".claude", "agents", "tester.md")
	for path, text := range map[string]string{
		zotTester:    "---\nname: tester\ndescription: Runs the tests.\ntools: read, bash\n---\nRun each test twice.\n",
		claudeTester: "---\nname: tester\ndescription: Claude Code's tester.\n---\nRun them.\n",
	} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(text), 0o644)
	}
	p := start(t, []string{"ZOT_HOME=" + home}, "rpc", "--provider", "scripted", "--cwd", cwd)
	p.send(`{"id":"c1","type":"run_command","name":"agents"}`)
	r, _ := p.response()
	if c := runCommandResult(t, r); c.Action != wire.CommandActionDisplay ||
		!strings.Contains(c.Text, "- general: a general-purpose agent") ||
		!strings.Contains(c.Text, "\n- tester: Runs the tests. (project, "+zotTester+")") ||
		!strings.Contains(c.Text, "\n- shadowed: tester (project, "+claudeTester+"), by "+zotTester) {
		t.Errorf("/agents: %+v", c)
	}
	p.send(`{"id":"c2","type":"run_command","name":"agents","args":"tester"}`)
	r, _ = p.response()
	if c := runCommandResult(t, r); c.Action != wire.CommandActionDisplay || !strings.Contains(c.Text, "tools: read, bash") || !strings.Contains(c.Text, "Run each test twice.") {
		t.Errorf("/agents tester: %+v", c)
	}
	p.send(`{"id":"c3","type":"run_command","name":"agents","args":"nope"}`)
	r, _ = p.response()
	if c := runCommandResult(t, r); c.Action != wire.CommandActionNoop || !strings.Contains(c.Error, `"nope"`) {
		t.Errorf("/agents nope: %+v", c)
	}
}

// TestRPCListAgents: list_agents answers with the profiles, their source
// and file, and those shadowed, as zot agents list --json does.
func TestRPCListAgents(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	zotTester := filepath.Join(cwd, ".zot", "agents", "tester.md")
	claudeTester := filepath.Join(cwd, ".claude", "agents", "tester.md")
	for path, text := range map[string]string{
		zotTester:    "---\nname: tester\ndescription: Runs the tests.\ntools: read, bash\n---\nRun each test twice.\n",
		claudeTester: "---\nname: tester\ndescription: Claude Code's tester.\n---\nRun them.\n",
	} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(text), 0o644)
	}
	p := start(t, []string{"ZOT_HOME=" + home}, "rpc", "--provider", "scripted", "--cwd", cwd)
	p.send(`{"id":"1","type":"list_agents"}`)
	r, _ := p.response()
	wantResponse(t, r, "list_agents", true, "")
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	l := res.(*wire.ListAgentsResult)
	if !l.Tool || len(l.Agents) != 1 || l.Agents[0].Name != "tester" || l.Agents[0].Source != "project" || l.Agents[0].Path != zotTester || strings.Join(l.Agents[0].Tools, ",") != "read,bash" {
		t.Errorf("agents: %+v", l)
	}
	if len(l.Shadowed) != 1 || l.Shadowed[0].Path != claudeTester || l.Shadowed[0].ShadowedBy != zotTester {
		t.Errorf("shadowed: %+v", l.Shadowed)
	}
}

// TestACPAgentsList: zot acp serves _zot/agents/list for a session, the
// session's folder deciding the project's profiles, as zot rpc's
// list_agents does.
func TestACPAgentsList(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	zotTester := filepath.Join(cwd, ".zot", "agents", "tester.md")
	claudeTester := filepath.Join(cwd, ".claude", "agents", "tester.md")
	for path, text := range map[string]string{
		zotTester:    "---\nname: tester\ndescription: Runs the tests.\n---\nRun each test twice.\n",
		claudeTester: "---\nname: tester\ndescription: Claude Code's tester.\n---\nRun them.\n",
	} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(text), 0o644)
	}
	a := startACPProc(t, home, "--provider", "scripted")
	a.peer.call("1", "initialize", `{"protocolVersion":1}`, "")
	id := sessionID(t, first(a.peer.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd), "")))
	f, _ := a.peer.call("3", "_zot/agents/list", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	var list struct {
		Agents   []map[string]any `json:"agents"`
		Shadowed []map[string]any `json:"shadowed"`
		Problems []string         `json:"problems"`
		Tool     bool             `json:"tool"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &list) != nil {
		t.Fatalf("_zot/agents/list: %s", f.raw)
	}
	if !list.Tool || len(list.Agents) != 1 || list.Agents[0]["path"] != zotTester || list.Agents[0]["source"] != "project" ||
		len(list.Shadowed) != 1 || list.Shadowed[0]["shadowedBy"] != zotTester || list.Problems == nil {
		t.Errorf("_zot/agents/list: %s", f.Result)
	}
}

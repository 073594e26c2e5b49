package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk/wire"
)

// writeFiles writes files (slash-separated paths under root) with their
// text, making their folders.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Skills written fresh in the shapes other agents use: Claude Code's
// (SKILL.md with allowed-tools, license and a nested metadata mapping, a
// folded description, scripts/ and references/ beside it; see
// code.claude.com/docs/en/skills) and Codex's (name and description, and
// metadata.short-description; see developers.openai.com/codex/skills),
// both following the Agent Skills format (agentskills.io/specification).
const (
	claudeSkill = `---
name: pdf-forms
description: >
  Fill in PDF forms from a JSON file of values.
  Use when the user asks to fill a PDF form.
allowed-tools: Read, Bash(python3:*)
license: Apache-2.0
metadata:
  author: example
  version: "1.0"
---
# Filling PDF forms

1. Read references/fields.md for the field names.
2. Run ` + "`python3 scripts/fill.py form.pdf values.json`" + `.
`
	codexSkill = `---
name: changelog
description: "Write a changelog entry in this project's style: one line, the area first."
metadata:
  short-description: Changelog entries
---
Look at the last entries of CHANGELOG.md and write one more in their style.
`
)

// skillTree makes a repository (root, with .git) holding skills in every
// place zot looks, a working directory two folders down, a zot home and
// a --skills-dir folder, and returns the working directory, the home and
// the flag's folder.
func skillTree(t *testing.T) (cwd, home, flagDir string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	home = filepath.Join(base, "home")
	flagDir = filepath.Join(base, "flag-skills")
	cwd = filepath.Join(root, "pkg", "app")
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nBody of " + desc + ".\n"
	}
	writeFiles(t, root, map[string]string{
		".git/HEAD": "ref: refs/heads/main\n",
		// the repository root's folders
		".zot/skills/pdf-forms/SKILL.md":             claudeSkill,
		".zot/skills/pdf-forms/scripts/fill.py":      "print('filled')\n",
		".zot/skills/pdf-forms/references/fields.md": "# Fields\n\nname, date, signature\n",
		".agents/skills/changelog/SKILL.md":          codexSkill,
		".claude/skills/review/SKILL.md":             skill("review", "root claude review"),
		".claude/skills/pdf-forms/SKILL.md":          skill("pdf-forms", "root claude pdf"),
		// the working directory's, nearer: they win over the root's
		"pkg/app/.claude/skills/review/SKILL.md": skill("review", "cwd claude review"),
		"pkg/app/.agents/skills/lint/SKILL.md":   skill("lint", "cwd agents lint"),
	})
	writeFiles(t, home, map[string]string{
		"skills/lint/SKILL.md":   skill("lint", "user lint"),
		"skills/deploy/SKILL.md": skill("deploy", "user deploy"),
	})
	writeFiles(t, flagDir, map[string]string{
		"deploy/SKILL.md": skill("deploy", "flag deploy"),
	})
	return cwd, home, flagDir
}

// TestSkillsDiscoveryOrder: skills are found in the folders of
// --skills-dir, then the project's .zot/skills, .agents/skills and
// .claude/skills from the working directory up to the repository's root
// (nearest first), then the zot home's; of two of one name the first wins
// and the other is listed as shadowed, with where each came from. zot rpc's
// list_skills and zot skills list --json say the same.
func TestSkillsDiscoveryOrder(t *testing.T) {
	cwd, home, flagDir := skillTree(t)
	root := filepath.Dir(filepath.Dir(cwd))
	env := []string{"ZOT_HOME=" + home}
	type entry struct{ Name, Desc, Source, Path, ShadowedBy string }
	want := []entry{
		{"changelog", "Write a changelog entry in this project's style: one line, the area first.", "project", root + "/.agents/skills/changelog/SKILL.md", ""},
		{"deploy", "flag deploy", "flag", flagDir + "/deploy/SKILL.md", ""},
		{"lint", "cwd agents lint", "project", cwd + "/.agents/skills/lint/SKILL.md", ""},
		{"pdf-forms", "Fill in PDF forms from a JSON file of values. Use when the user asks to fill a PDF form.", "project", root + "/.zot/skills/pdf-forms/SKILL.md", ""},
		{"review", "cwd claude review", "project", cwd + "/.claude/skills/review/SKILL.md", ""},
	}
	wantShadowed := []entry{
		{"pdf-forms", "root claude pdf", "project", root + "/.claude/skills/pdf-forms/SKILL.md", root + "/.zot/skills/pdf-forms/SKILL.md"},
		{"review", "root claude review", "project", root + "/.claude/skills/review/SKILL.md", cwd + "/.claude/skills/review/SKILL.md"},
		{"deploy", "user deploy", "user", home + "/skills/deploy/SKILL.md", flagDir + "/deploy/SKILL.md"},
		{"lint", "user lint", "user", home + "/skills/lint/SKILL.md", cwd + "/.agents/skills/lint/SKILL.md"},
	}
	entries := func(list []wire.SkillInfo) []entry {
		var out []entry
		for _, s := range list {
			out = append(out, entry{s.Name, s.Description, string(s.Source), s.Path, s.ShadowedBy})
		}
		return out
	}
	check := func(door string, res wire.ListSkillsResult) {
		t.Helper()
		if got := entries(res.Skills); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: skills\n got %+v\nwant %+v", door, got, want)
		}
		if got := entries(res.Shadowed); !reflect.DeepEqual(got, wantShadowed) {
			t.Errorf("%s: shadowed\n got %+v\nwant %+v", door, got, wantShadowed)
		}
		if len(res.Problems) != 0 || !res.Tool {
			t.Errorf("%s: problems %+v, tool %v", door, res.Problems, res.Tool)
		}
	}

	p := start(t, env, "rpc", "--provider", "scripted", "--cwd", cwd, "--skills-dir", flagDir)
	p.send(`{"id":"1","type":"list_skills"}`)
	r, _ := p.response()
	wantResponse(t, r, "list_skills", true, "")
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	check("list_skills", *res.(*wire.ListSkillsResult))

	// /skills lists them, /skills <name> shows one's instructions.
	p.send(`{"id":"c1","type":"run_command","name":"skills"}`)
	r, _ = p.response()
	if c := runCommandResult(t, r); c.Action != wire.CommandActionDisplay ||
		!strings.Contains(c.Text, "Skills (the model loads them with the skill tool):\n- changelog: Write a changelog entry") ||
		!strings.Contains(c.Text, "\n- shadowed: lint (user, "+home+"/skills/lint/SKILL.md), by "+cwd+"/.agents/skills/lint/SKILL.md") {
		t.Errorf("/skills: %+v", c)
	}
	p.send(`{"id":"c2","type":"run_command","name":"skills","args":"pdf-forms"}`)
	r, _ = p.response()
	if c := runCommandResult(t, r); c.Action != wire.CommandActionDisplay || !strings.Contains(c.Text, "# Filling PDF forms") {
		t.Errorf("/skills pdf-forms: %+v", c)
	}
	p.send(`{"id":"c3","type":"run_command","name":"skills","args":"nope"}`)
	r, _ = p.response()
	if c := runCommandResult(t, r); c.Action != wire.CommandActionNoop || c.Error != `skill "nope": not found; /skills lists them.` {
		t.Errorf("/skills nope: %+v", c)
	}

	stdout, stderr, code := runZot(t, "", env, "skills", "list", "--json", "--cwd", cwd, "--skills-dir", flagDir)
	if code != 0 {
		t.Fatalf("zot skills list: exit %d: %s", code, stderr)
	}
	var cli wire.ListSkillsResult
	if err := json.Unmarshal([]byte(stdout), &cli); err != nil {
		t.Fatalf("zot skills list --json: %v\n%s", err, stdout)
	}
	check("zot skills list --json", cli)

	stdout, _, code = runZot(t, "", env, "skills", "list", "--cwd", cwd, "--skills-dir", flagDir)
	if code != 0 || !strings.Contains(stdout, "review (project, "+cwd+"/.claude/skills/review/SKILL.md)\n  cwd claude review\n") ||
		!strings.Contains(stdout, "shadowed: deploy (user, "+home+"/skills/deploy/SKILL.md), by "+flagDir+"/deploy/SKILL.md\n") {
		t.Errorf("zot skills list: exit %d:\n%s", code, stdout)
	}

	// --no-skills (and upstream's --no-skill) finds none.
	for _, flag := range []string{"--no-skills", "--no-skill"} {
		p := start(t, env, "rpc", "--provider", "scripted", "--cwd", cwd, flag)
		p.send(`{"id":"1","type":"list_skills"}`)
		r, _ := p.response()
		res, _ := r.Result()
		if l := res.(*wire.ListSkillsResult); len(l.Skills)+len(l.Shadowed) != 0 || l.Tool {
			t.Errorf("%s: %+v", flag, l)
		}
	}
}

// skillScript is a script whose first step calls the skill tool once per
// args, then answers "done".
func skillScript(t *testing.T, args ...map[string]any) string {
	var calls []any
	for _, a := range args {
		calls = append(calls, map[string]any{"name": "skill", "args": a})
	}
	return script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": calls}, map[string]any{"text": "done"},
	}}}})
}

// promptResults runs one prompt and returns its tool results in order.
func promptResults(t *testing.T, p *proc) []*wire.ToolResultEvent {
	t.Helper()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	return toolResults(p.untilDone())
}

// systemOf is the system prompt of a recorded Anthropic request.
func systemOf(t *testing.T, body map[string]any) string {
	t.Helper()
	switch s := body["system"].(type) {
	case string:
		return s
	case []any:
		var b strings.Builder
		for _, blk := range s {
			if m, ok := blk.(map[string]any); ok {
				text, _ := m["text"].(string)
				b.WriteString(text)
			}
		}
		return b.String()
	}
	t.Fatalf("request without a system prompt: %v", body["system"])
	return ""
}

// toolNames are the tools a recorded Anthropic request offers.
func toolNames(body map[string]any) []string {
	var out []string
	list, _ := body["tools"].([]any)
	for _, tl := range list {
		if m, ok := tl.(map[string]any); ok {
			name, _ := m["name"].(string)
			out = append(out, name)
		}
	}
	return out
}

// TestSkillsProgressiveLoading: the system prompt lists each skill's
// name and description, never its body, and stays the same from one call
// to the next; the skill tool gives the body (with the files of its
// folder) and the files the body names only when called. --tools and
// --no-tools govern the skill tool: without it the prompt lists no
// skills.
func TestSkillsProgressiveLoading(t *testing.T) {
	cwd, home, _ := skillTree(t)
	env := []string{"ZOT_HOME=" + home}
	srv := providertest.NewBoundServer(t, "")
	args := []string{"rpc", "--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key",
		"--base-url", srv.URL, "--cwd", cwd, "--strict-mcp-config"}
	p := start(t, env, args...)
	for _, id := range []string{"1", "2"} {
		p.send(`{"id":"` + id + `","type":"prompt","message":"hi"}`)
		r, _ := p.response()
		wantResponse(t, r, "prompt", true, "")
		p.untilDone()
	}
	_, _, _, bodies := srv.Stats()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	system := systemOf(t, bodies[0])
	for _, line := range []string{
		"\n- pdf-forms: Fill in PDF forms from a JSON file of values. Use when the user asks to fill a PDF form.",
		"\n- changelog: Write a changelog entry in this project's style: one line, the area first.",
		"\n- review: cwd claude review",
	} {
		if !strings.Contains(system, line) {
			t.Errorf("the system prompt lacks %q:\n%s", line, system)
		}
	}
	for _, body := range []string{"Filling PDF forms", "Body of", "root claude", "user lint"} {
		if strings.Contains(system, body) {
			t.Errorf("the system prompt holds %q, a skill's body or a shadowed skill:\n%s", body, system)
		}
	}
	if second := systemOf(t, bodies[1]); second != system {
		t.Errorf("the system prompt changed between two prompts:\n%s\n---\n%s", system, second)
	}
	if names := toolNames(bodies[0]); !strings.Contains(strings.Join(names, ","), "skill") {
		t.Errorf("tools offered %v, want the skill tool among them", names)
	}

	// --tools without skill, --no-tools: no skill tool, no list.
	for _, flags := range [][]string{{"--tools", "read,ls"}, {"--no-tools"}, {"--no-skills"}} {
		srv := providertest.NewBoundServer(t, "")
		a := append(append([]string{}, args...), flags...)
		a[slicesIndex(a, "--base-url")+1] = srv.URL
		p := start(t, env, a...)
		p.send(`{"id":"1","type":"prompt","message":"hi"}`)
		p.response()
		p.untilDone()
		_, _, _, bodies := srv.Stats()
		if len(bodies) != 1 {
			t.Fatalf("%v: %d requests", flags, len(bodies))
		}
		if s := systemOf(t, bodies[0]); strings.Contains(s, "pdf-forms") || strings.Contains(s, "Skills:") {
			t.Errorf("%v: the system prompt lists skills:\n%s", flags, s)
		}
		if names := toolNames(bodies[0]); strings.Contains(strings.Join(names, ","), "skill") {
			t.Errorf("%v: tools offered %v", flags, names)
		}
	}

	// The skill tool loads the body, then a file it names; it only reads,
	// so it runs in mode read_only (--permission deny) too.
	p = start(t, env, "rpc", "--provider", "scripted", "--cwd", cwd, "--tools", "skill", "--permission", "deny",
		"--script", skillScript(t, map[string]any{"name": "pdf-forms"}, map[string]any{"name": "pdf-forms", "file": "references/fields.md"}, map[string]any{"name": "pdf-forms", "file": "scripts"}))
	res := promptResults(t, p)
	if len(res) != 3 {
		t.Fatalf("%d tool results, want 3", len(res))
	}
	root := filepath.Dir(filepath.Dir(cwd))
	body := resultText(res[0])
	for _, want := range []string{"Skill pdf-forms (folder " + root + "/.zot/skills/pdf-forms)", "# Filling PDF forms\n\n1. Read references/fields.md", "Files in the skill's folder:\n- references/fields.md\n- scripts/fill.py"} {
		if res[0].IsError || !strings.Contains(body, want) {
			t.Errorf("skill pdf-forms: lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "allowed-tools") {
		t.Errorf("skill pdf-forms: the front matter is in the body:\n%s", body)
	}
	if got := resultText(res[1]); res[1].IsError || got != "Skill pdf-forms, references/fields.md:\n\n# Fields\n\nname, date, signature\n" {
		t.Errorf("references/fields.md: %q", got)
	}
	if got := resultText(res[2]); res[2].IsError || got != "Skill pdf-forms, scripts:\n\nfill.py" {
		t.Errorf("scripts: %q", got)
	}

	// get_skill reads the same.
	p.send(`{"id":"g","type":"get_skill","name":"pdf-forms","file":"scripts/fill.py"}`)
	r, _ := p.response()
	wantResponse(t, r, "get_skill", true, "")
	got, _ := r.Result()
	if g := got.(*wire.GetSkillResult); g.Text != "print('filled')\n" || g.File != "scripts/fill.py" || g.Skill.Name != "pdf-forms" {
		t.Errorf("get_skill: %+v", g)
	}
}

func slicesIndex(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestSkillsBadFrontMatter: a SKILL.md whose front matter does not parse,
// or lacks a field, or names another folder, is left out with a one-line
// message naming the file, the line and the field (in list_skills and on
// stderr); the other skills are offered.
func TestSkillsBadFrontMatter(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".zot", "skills")
	writeFiles(t, dir, map[string]string{
		"good/SKILL.md":         "---\nname: good\ndescription: Works.\n---\nok\n",
		"no-desc/SKILL.md":      "---\nname: no-desc\n---\nbody\n",
		"unclosed/SKILL.md":     "---\nname: unclosed\ndescription: x\n",
		"bad-yaml/SKILL.md":     "---\nname: bad-yaml\ndescription: \"never closed\nother: 1\n---\n",
		"wrong-name/SKILL.md":   "---\nname: other-name\ndescription: x\n---\n",
		"Upper/SKILL.md":        "---\ndescription: x\n---\n",
		"no-front/SKILL.md":     "# Just text\n",
		"list-desc/SKILL.md":    "---\nname: list-desc\ndescription:\n  - a\n---\n",
		"tab-indent/SKILL.md":   "---\nname: tab-indent\nmetadata:\n  \tv: 1\ndescription: x\n---\n",
		"not-a-skill/README.md": "no SKILL.md here\n",
	})
	stderr := &zotbin.Buffer{} // written by the process while the test reads it
	p := startWith(t, stderr, nil, "rpc", "--provider", "scripted", "--cwd", cwd)
	p.send(`{"id":"1","type":"list_skills"}`)
	r, _ := p.response()
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	l := res.(*wire.ListSkillsResult)
	if len(l.Skills) != 1 || l.Skills[0].Name != "good" {
		t.Errorf("skills offered: %+v", l.Skills)
	}
	f := func(name string) string { return filepath.Join(dir, name, "SKILL.md") }
	want := []string{
		f("Upper") + `: name: the folder's name "Upper", taken as the skill's name, be lowercase letters, digits and single hyphens, not starting or ending with one: "Upper"`,
		f("bad-yaml") + ":3: description: quoted string is never closed",
		f("list-desc") + ":3: description: must be a string, not a list",
		f("no-desc") + ":1: description: required: say what the skill does and when to use it",
		f("no-front") + ": no front matter: SKILL.md must start with a --- block giving name and description",
		f("tab-indent") + ":4: metadata: a tab in indentation (YAML indents with spaces)",
		f("unclosed") + ":1: front matter opened with --- is never closed",
		f("wrong-name") + `:2: name: "other-name" must be the name of the skill's folder, "wrong-name"`,
	}
	var got []string
	for _, pr := range l.Problems {
		got = append(got, pr.Message)
		if pr.Source != wire.SkillSourceProject || pr.Path != filepath.Join(filepath.Dir(pr.Path), "SKILL.md") {
			t.Errorf("problem %+v", pr)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems\n got %q\nwant %q", got, want)
	}
	p.send(`{"id":"2","type":"ping"}`)
	p.response()
	for _, w := range want {
		if !strings.Contains(stderr.String(), "zot: skill left out: "+w+"\n") {
			t.Errorf("stderr does not tell %q:\n%s", w, stderr.String())
		}
	}
}

// TestSkillsPathEscape: the skill tool reads only inside the skill's
// folder: "..", an absolute path and a symbolic link pointing out are
// refused (get_skill: invalid_params); a link that stays inside is read.
func TestSkillsPathEscape(t *testing.T) {
	cwd := t.TempDir()
	secret := filepath.Join(cwd, "secret.txt")
	dir := filepath.Join(cwd, ".zot", "skills", "s")
	writeFiles(t, cwd, map[string]string{
		"secret.txt":                  "TOP SECRET\n",
		".zot/skills/s/SKILL.md":      "---\nname: s\ndescription: x\n---\nbody\n",
		".zot/skills/s/docs/inner.md": "inner\n",
	})
	for link, target := range map[string]string{
		"out-file": secret,
		"out-dir":  cwd,
		"rel-out":  "../../../secret.txt",
		"in-link":  "docs/inner.md",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	calls := []map[string]any{
		{"name": "s", "file": "../../../secret.txt"},
		{"name": "s", "file": secret},
		{"name": "s", "file": "out-file"},
		{"name": "s", "file": "out-dir/secret.txt"},
		{"name": "s", "file": "rel-out"},
		{"name": "s", "file": "docs/../../../../secret.txt"},
		{"name": "s", "file": "in-link"},
		{"name": "s", "file": "missing.md"},
		{"name": "nope"},
	}
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", cwd, "--script", skillScript(t, calls...))
	res := promptResults(t, p)
	if len(res) != len(calls) {
		t.Fatalf("%d results, want %d", len(res), len(calls))
	}
	for i, tr := range res[:6] {
		text := resultText(tr)
		if !tr.IsError || strings.Contains(text, "TOP SECRET") || !strings.Contains(text, "outside the folder of skill s") {
			t.Errorf("%v: error %v, %q", calls[i], tr.IsError, text)
		}
	}
	if text := resultText(res[6]); res[6].IsError || text != "Skill s, in-link:\n\ninner\n" {
		t.Errorf("a link inside the folder: %q", text)
	}
	if text := resultText(res[7]); !res[7].IsError || text != "skill s has no file missing.md" {
		t.Errorf("a missing file: %q", text)
	}
	if text := resultText(res[8]); !res[8].IsError || text != `no skill named "nope"; the skills are: s` {
		t.Errorf("an unknown skill: %q", text)
	}
	for _, file := range []string{"../../../secret.txt", "out-file", "out-dir/secret.txt"} {
		p.send(`{"id":"g","type":"get_skill","name":"s","file":"` + file + `"}`)
		r, _ := p.response()
		wantResponse(t, r, "get_skill", false, wire.CodeInvalidParams)
	}
	p.send(`{"id":"g","type":"get_skill","name":"nope"}`)
	r, _ := p.response()
	wantResponse(t, r, "get_skill", false, wire.CodeNotFound)
}

// TestProjectInstructions: AGENTS.md (CLAUDE.md in a folder without
// one) from the repository's root down to the working directory go into
// the system prompt outermost first, each under its path; past the bound
// the text is cut with a notice (in the prompt and on stderr);
// --no-project-instructions leaves them out.
func TestProjectInstructions(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	cwd := filepath.Join(root, "a", "b")
	writeFiles(t, base, map[string]string{
		"AGENTS.md":          "OUTSIDE THE REPOSITORY\n",
		"repo/.git/HEAD":     "ref: refs/heads/main\n",
		"repo/AGENTS.md":     "ROOT AGENTS\n",
		"repo/CLAUDE.md":     "ROOT CLAUDE (shadowed by AGENTS.md)\n",
		"repo/a/CLAUDE.md":   "MIDDLE CLAUDE\n",
		"repo/a/b/AGENTS.md": "CWD AGENTS\n",
	})
	run := func(env []string, extra ...string) (system, stderr string) {
		t.Helper()
		srv := providertest.NewBoundServer(t, "")
		errb := &zotbin.Buffer{} // written by the process while the test reads it
		p := startWith(t, errb, env, append([]string{"rpc", "--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key",
			"--base-url", srv.URL, "--cwd", cwd, "--strict-mcp-config"}, extra...)...)
		p.send(`{"id":"1","type":"prompt","message":"hi"}`)
		p.response()
		p.untilDone()
		_, _, _, bodies := srv.Stats()
		return systemOf(t, bodies[0]), errb.String()
	}
	system, _ := run(nil)
	want := "Instructions from " + root + "/AGENTS.md:\n\nROOT AGENTS\n\n" +
		"Instructions from " + root + "/a/CLAUDE.md:\n\nMIDDLE CLAUDE\n\n" +
		"Instructions from " + cwd + "/AGENTS.md:\n\nCWD AGENTS"
	if !strings.Contains(system, want) {
		t.Errorf("the system prompt lacks\n%s\nin:\n%s", want, system)
	}
	for _, no := range []string{"OUTSIDE", "ROOT CLAUDE"} {
		if strings.Contains(system, no) {
			t.Errorf("the system prompt holds %q", no)
		}
	}
	if s, _ := run(nil, "--no-project-instructions"); strings.Contains(s, "Instructions from") {
		t.Errorf("--no-project-instructions: %s", s)
	}

	// 40 KiB at the root: the bound (32 KiB in all) cuts it, and the
	// files after it are left out; both are told.
	big := strings.Repeat("0123456789abcdef\n", 40<<10/17)
	writeFiles(t, root, map[string]string{"AGENTS.md": "START\n" + big + "END OF ROOT\n"})
	system, stderr := run(nil)
	if !strings.Contains(system, "START\n") || strings.Contains(system, "END OF ROOT") || strings.Contains(system, "CWD AGENTS") {
		t.Errorf("the bound did not cut the instructions:\n%.300s", system)
	}
	size := len("START\n" + big + "END OF ROOT\n")
	notice := "[" + root + "/AGENTS.md is " + itoa(size) + " bytes; only its first 32768 are shown: project instructions are limited to 32768 bytes in all]"
	if !strings.Contains(system, notice) {
		t.Errorf("the system prompt lacks the notice %q", notice)
	}
	for _, w := range []string{root + "/AGENTS.md cut to its first 32768 of " + itoa(size) + " bytes", root + "/a/CLAUDE.md left out: the limit of project instructions was reached"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestSystemFile: the zot home's SYSTEM.md replaces zot's own system
// prompt (the tools, instructions, skills, date and folder still follow);
// --system-prompt wins over it.
func TestSystemFile(t *testing.T) {
	home := t.TempDir()
	writeFiles(t, home, map[string]string{"SYSTEM.md": "You are Ada, a careful reviewer.\n"})
	env := []string{"ZOT_HOME=" + home}
	run := func(extra ...string) string {
		t.Helper()
		srv := providertest.NewBoundServer(t, "")
		p := start(t, env, append([]string{"rpc", "--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key",
			"--base-url", srv.URL, "--cwd", t.TempDir(), "--strict-mcp-config"}, extra...)...)
		p.send(`{"id":"1","type":"prompt","message":"hi"}`)
		p.response()
		p.untilDone()
		_, _, _, bodies := srv.Stats()
		return systemOf(t, bodies[0])
	}
	s := run()
	if !strings.HasPrefix(s, "You are Ada, a careful reviewer.\n\nTools available:") || strings.Contains(s, "You are zot") || !strings.Contains(s, "Current working directory: ") {
		t.Errorf("SYSTEM.md: %s", s)
	}
	if s := run("--system-prompt", "You are Bob."); !strings.HasPrefix(s, "You are Bob.\n\n") || strings.Contains(s, "Ada") {
		t.Errorf("--system-prompt over SYSTEM.md: %s", s)
	}
}

// TestSkillFlags: --with-skills is accepted (the default), contradicts
// --no-skills, as --skills-dir does; --tools may name skill.
func TestSkillFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--with-skills"}, 0, ""},
		{[]string{"--tools", "read,skill"}, 0, ""},
		{[]string{"--no-skills", "--with-skills"}, 2, "zot: --no-skills and --with-skills contradict each other\n"},
		{[]string{"--no-skills", "--skills-dir", dir}, 2, "zot: --no-skills and --skills-dir contradict each other\n"},
	} {
		args := append([]string{"-p", "hi", "--provider", "scripted", "--cwd", dir}, c.args...)
		_, stderr, code := runZot(t, "", nil, args...)
		if code != c.code || c.err != "" && !strings.HasPrefix(stderr, c.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d %q", c.args, code, stderr, c.code, c.err)
		}
	}
}

// TestACPSkills: zot acp serves _zot/skills/list and _zot/skills/get for
// a session, each skill with where it came from, as zot rpc does: the
// session's folder decides the project's skills; a path out of a skill's
// folder is invalid params naming file, an unknown skill not found.
func TestACPSkills(t *testing.T) {
	cwd, home, flagDir := skillTree(t)
	a := startACPProc(t, home, "--provider", "scripted", "--skills-dir", flagDir)
	a.peer.call("1", "initialize", `{"protocolVersion":1}`, "")
	id := sessionID(t, first(a.peer.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd), "")))
	f, _ := a.peer.call("3", "_zot/skills/list", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	var list struct {
		Skills   []map[string]any `json:"skills"`
		Shadowed []map[string]any `json:"shadowed"`
		Problems []map[string]any `json:"problems"`
		Tool     bool             `json:"tool"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &list) != nil {
		t.Fatalf("_zot/skills/list: %s", f.raw)
	}
	var got []string
	for _, s := range list.Skills {
		got = append(got, fmt.Sprint(s["name"], "/", s["source"]))
	}
	for _, s := range list.Shadowed {
		got = append(got, fmt.Sprint(s["name"], "/", s["source"], " by ", s["shadowedBy"]))
	}
	root := filepath.Dir(filepath.Dir(cwd))
	want := []string{"changelog/project", "deploy/flag", "lint/project", "pdf-forms/project", "review/project",
		"pdf-forms/project by " + root + "/.zot/skills/pdf-forms/SKILL.md",
		"review/project by " + cwd + "/.claude/skills/review/SKILL.md",
		"deploy/user by " + flagDir + "/deploy/SKILL.md",
		"lint/user by " + cwd + "/.agents/skills/lint/SKILL.md"}
	if !reflect.DeepEqual(got, want) || !list.Tool || len(list.Problems) != 0 {
		t.Errorf("_zot/skills/list:\n got %q\nwant %q\n%s", got, want, f.raw)
	}
	f, _ = a.peer.call("4", "_zot/skills/get", fmt.Sprintf(`{"sessionId":%q,"name":"pdf-forms","file":"references/fields.md"}`, id), "")
	var get struct {
		Skill map[string]any `json:"skill"`
		File  string         `json:"file"`
		Text  string         `json:"text"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &get) != nil || get.Text != "# Fields\n\nname, date, signature\n" || get.File != "references/fields.md" || get.Skill["dir"] != root+"/.zot/skills/pdf-forms" {
		t.Errorf("_zot/skills/get: %s", f.raw)
	}
	f, _ = a.peer.call("5", "_zot/skills/get", fmt.Sprintf(`{"sessionId":%q,"name":"pdf-forms","file":"../../../AGENTS.md"}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["field"] != "file" {
		t.Errorf("a path out of the folder: %s", f.raw)
	}
	f, _ = a.peer.call("6", "_zot/skills/get", fmt.Sprintf(`{"sessionId":%q,"name":"nope"}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["field"] != "name" {
		t.Errorf("an unknown skill: %s", f.raw)
	}
}

// TestSkillsCommandUsage: zot skills with an unknown subcommand, show
// without a name, a flag it does not read: usage errors.
func TestSkillsCommandUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"skills", "bogus"}, `zot: unknown command "bogus" for zot skills` + "\n"},
		{[]string{"skills", "show"}, "zot: zot skills show takes one skill name\n"},
		{[]string{"skills", "list", "--provider", "openai"}, "zot: --provider does not apply to zot skills list\n"},
	} {
		stdout, stderr, code := runZot(t, "", nil, c.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, c.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, stdout, stderr)
		}
	}
}

// TestSkillsHostileFiles: a repository's skill folder may hold what no
// read should wait on or take in: a SKILL.md that is a named pipe or a
// link to /dev/stdin (which would read zot rpc's own protocol stream),
// a skill file that is a named pipe. Each is left out or refused with an
// error, at once, and the process keeps serving.
func TestSkillsHostileFiles(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".zot", "skills")
	writeFiles(t, dir, map[string]string{
		"s/SKILL.md":    "---\nname: s\ndescription: x\n---\nbody\n",
		"stdin/.keep":   "",
		"pipe/.keep":    "",
		"outside/.keep": "",
		"elsewhere.md":  "---\nname: outside\ndescription: read from beside the folder\n---\nnot this skill's\n",
		// Brackets nested without end: each level's field name is longer.
		"deep/SKILL.md": "---\nname: deep\ndescription: x\nm: " + strings.Repeat("[", 5000) + "\n---\n",
	})
	for _, p := range []string{filepath.Join(dir, "pipe", "SKILL.md"), filepath.Join(dir, "s", "fifo")} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/stdin", filepath.Join(dir, "stdin", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../elsewhere.md", filepath.Join(dir, "outside", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", cwd, "--script", skillScript(t,
		map[string]any{"name": "s", "file": "fifo"},
		map[string]any{"name": "s"},
	))
	p.send(`{"id":"l","type":"list_skills"}`)
	r, _ := p.response()
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	l := res.(*wire.ListSkillsResult)
	if len(l.Skills) != 1 || l.Skills[0].Name != "s" {
		t.Errorf("skills offered: %+v", l.Skills)
	}
	var problems []string
	for _, pr := range l.Problems {
		problems = append(problems, pr.Message)
	}
	if all := strings.Join(problems, "\n"); !strings.Contains(all, filepath.Join(dir, "deep", "SKILL.md")+":4: m[0][0]") || !strings.Contains(all, "nested deeper than") {
		t.Errorf("no problem says the brackets nest too deep: %q", problems)
	}
	for _, name := range []string{"pipe", "stdin", "outside"} {
		if !strings.Contains(strings.Join(problems, "\n"), filepath.Join(dir, name, "SKILL.md")) {
			t.Errorf("no problem names %s's SKILL.md: %q", name, problems)
		}
	}
	results := promptResults(t, p)
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	if text := resultText(results[0]); !results[0].IsError || !strings.Contains(text, "not a regular file") {
		t.Errorf("a named pipe in the skill: error %v, %q", results[0].IsError, text)
	}
	if text := resultText(results[1]); results[1].IsError || !strings.Contains(text, "body") {
		t.Errorf("the skill's body: %q", text)
	}
}

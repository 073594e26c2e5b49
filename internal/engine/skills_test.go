package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/skills"
)

// TestSkillsHermeticByDefault: a session whose configuration names no
// skills and no instructions (the Go SDK's zero value) reads none from
// its folder, offers no skill tool and lists none in its system prompt;
// naming them finds them.
func TestSkillsHermeticByDefault(t *testing.T) {
	files := map[string]string{
		".zot/skills/demo/SKILL.md": "---\nname: demo\ndescription: A demo skill.\n---\nbody\n",
		"AGENTS.md":                 "PROJECT RULES\n",
	}
	write := func(dir string) {
		for name, text := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var dir string
	s := newSession(t, "", func(c *SessionConfig) { dir = c.CWD; write(dir) })
	system := systemPrompt(SessionConfig{}, s.CWD(), s.Tools(), &s.prompt)()
	if _, ok := s.Tools().View().Lookup(skills.ToolName); ok || s.Skills().Len() != 0 || strings.Contains(system, "demo") || strings.Contains(system, "PROJECT RULES") {
		t.Errorf("zero configuration: skill tool %v, %d skills, system prompt:\n%s", ok, s.Skills().Len(), system)
	}
	s = newSession(t, "", func(c *SessionConfig) {
		write(c.CWD)
		c.Skills = skills.Options{Project: true}
		c.ProjectInstructions = true
	})
	system = systemPrompt(SessionConfig{}, s.CWD(), s.Tools(), &s.prompt)()
	if _, ok := s.Tools().View().Lookup(skills.ToolName); !ok || !strings.Contains(system, "\n- demo: A demo skill.") || !strings.Contains(system, "PROJECT RULES") {
		t.Errorf("skills and instructions named: skill tool %v, system prompt:\n%s", ok, system)
	}
	if l := s.SkillList(); len(l.Skills) != 1 || !l.Tool {
		t.Errorf("SkillList: %+v", l)
	}
}

package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"zot.dev/zot/internal/instructions"
	"zot.dev/zot/internal/skills"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// promptParts are what a session's system prompt holds besides zot's own
// text and the tools: the skills the model may load and the project's
// instructions. They are read once, as the session starts, so the prompt
// stays the same from one model call to the next (and a provider's
// prompt cache keeps it).
type promptParts struct {
	skills       *skills.Set
	skillTool    bool // the skill tool is in the session's tool set
	instructions instructions.Set
}

// loadPromptParts finds the skills and instructions cfg asks for.
func loadPromptParts(cfg SessionConfig, cwd string) promptParts {
	p := promptParts{skills: &skills.Set{}}
	if cfg.Skills.On() {
		p.skills = skills.Discover(cfg.Skills, cwd)
	}
	if cfg.ProjectInstructions {
		p.instructions = instructions.Load(cwd, 0)
	}
	return p
}

// offer adds the skill tool to the built-in tools, so that a tool list
// may name it.
func (p *promptParts) offer(all []tools.Tool) []tools.Tool {
	return append(all, skills.NewTool(p.skills))
}

// selected drops the skill tool from the selected tools when there is no
// skill to load, and notes whether it stays.
func (p *promptParts) selected(list []tools.Tool) []tools.Tool {
	isSkill := func(t tools.Tool) bool { return t.Name() == skills.ToolName }
	if p.skills.Len() == 0 {
		return slices.DeleteFunc(list, isSkill)
	}
	p.skillTool = slices.ContainsFunc(list, isSkill)
	return list
}

// manifest lists the skills for the system prompt: none when the model
// cannot load them.
func (p *promptParts) manifest() []sysprompt.Skill {
	if !p.skillTool {
		return nil
	}
	list := p.skills.Skills()
	out := make([]sysprompt.Skill, 0, len(list))
	for _, sk := range list {
		out = append(out, sysprompt.Skill{Name: sk.Name, Description: sk.Description})
	}
	return out
}

// promptWarnings tells the log about skills that could not be read and
// instructions the bound cut.
func (s *Session) promptWarnings() {
	if s.log == nil {
		return
	}
	for _, p := range s.prompt.skills.Problems() {
		fmt.Fprintf(s.log, "zot: skill left out: %s\n", p.Message)
	}
	if n := s.prompt.instructions.Notice; n != "" {
		fmt.Fprintf(s.log, "zot: %s\n", n)
	}
}

// Skills returns the session's skills, found as it started: those
// offered, those shadowed by one of the same name found earlier, and
// those that could not be read.
func (s *Session) Skills() *skills.Set { return s.prompt.skills }

// SkillToolOn reports whether the model may load the session's skills
// (the skill tool is among its tools and there is a skill).
func (s *Session) SkillToolOn() bool { return s.prompt.skillTool }

// InstructionFiles returns the project's instruction files in the system
// prompt, outermost first, and the notice of what the bound cut ("" when
// nothing).
func (s *Session) InstructionFiles() ([]instructions.File, string) {
	return s.prompt.instructions.Files, s.prompt.instructions.Notice
}

// SkillList is the session's skills as list_skills answers.
func (s *Session) SkillList() wire.ListSkillsResult {
	set := s.prompt.skills
	res := wire.ListSkillsResult{Skills: []wire.SkillInfo{}, Shadowed: []wire.SkillInfo{}, Problems: []wire.SkillProblem{}, Tool: s.prompt.skillTool}
	for _, sk := range set.Skills() {
		res.Skills = append(res.Skills, skillInfo(sk))
	}
	for _, sk := range set.Shadowed() {
		res.Shadowed = append(res.Shadowed, skillInfo(sk))
	}
	for _, p := range set.Problems() {
		res.Problems = append(res.Problems, wire.SkillProblem{Path: p.Path, Source: wire.SkillSource(p.Source), Message: p.Message})
	}
	return res
}

// GetSkill reads a skill's instructions, or a file or folder inside its
// folder, as the skill tool does (skills.Set.Load): an error of code
// not_found for a skill or file there is not, invalid_params for a path
// that leads out of the skill's folder.
func (s *Session) GetSkill(name, file string) (wire.GetSkillResult, error) {
	l, err := s.prompt.skills.Load(name, file)
	if err != nil {
		return wire.GetSkillResult{}, err
	}
	res := wire.GetSkillResult{Skill: skillInfo(l.Skill), File: l.Path, Text: l.Text, Files: l.Files}
	if l.Truncated {
		res.Truncated = &l.Truncated
	}
	if l.Binary {
		res.Binary = &l.Binary
	}
	return res, nil
}

func skillInfo(sk skills.Skill) wire.SkillInfo {
	return wire.SkillInfo{Name: sk.Name, Description: sk.Description, Source: wire.SkillSource(sk.Source), Path: sk.File, Dir: sk.Dir, ShadowedBy: sk.ShadowedBy}
}

// runSkills serves /skills [name]: the session's skills, or one's
// instructions as the skill tool gives them.
func runSkills(_ context.Context, s *Session, args string) (CommandRun, error) {
	set := s.prompt.skills
	if args != "" {
		l, err := set.Load(args, "")
		if err != nil {
			return refusal(fmt.Sprintf("%v; /skills lists them.", err)), nil
		}
		return display(skills.Render(l)), nil
	}
	var b strings.Builder
	switch {
	case set.Len() == 0:
		b.WriteString("No skills. zot looks for folders holding a SKILL.md in .zot/skills, .agents/skills and .claude/skills (from the working directory up to the repository's root), the zot home's skills and --skills-dir.")
	case !s.prompt.skillTool:
		b.WriteString("Skills (the skill tool is off: the model is not offered them):")
	default:
		b.WriteString("Skills (the model loads them with the skill tool):")
	}
	for _, sk := range set.Skills() {
		fmt.Fprintf(&b, "\n- %s: %s (%s, %s)", sk.Name, sk.Description, sk.Source, sk.File)
	}
	for _, sk := range set.Shadowed() {
		fmt.Fprintf(&b, "\n- shadowed: %s (%s, %s), by %s", sk.Name, sk.Source, sk.File, sk.ShadowedBy)
	}
	for _, p := range set.Problems() {
		fmt.Fprintf(&b, "\n- not read: %s", p.Message)
	}
	return display(b.String()), nil
}

package sdk

import "zot.dev/zot/internal/skills"

// SkillsOptions says where a Runtime finds skills (Config.Skills,
// docs/skills.md): folders of SKILL.md folders (Dirs), the project's
// .zot/skills, .agents/skills and .claude/skills (Project), a zot home's
// skills (Home). The zero value finds none: a Runtime reads no file the
// program did not name. Their names and descriptions go into the system
// prompt, and the skill tool loads them when the model asks.
type SkillsOptions = skills.Options

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/skills"
	"zot.dev/zot/sdk/wire"
)

// skillFlags choose the skills and instructions a session's system prompt
// holds (docs/skills.md). They are agent flags.
func skillFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "skills-dir", Usage: "a folder of skills (folders holding SKILL.md), or one skill's folder, looked in before the project's and the zot home's; repeatable, the first to name a skill winning"},
		&cli.BoolFlag{Name: "no-skills", Aliases: []string{"no-skill"}, Usage: "offer no skills: no skill list in the system prompt and no skill tool"},
		&cli.BoolFlag{Name: "with-skills", Usage: "offer the skills found (the default; accepted for upstream zot's scripts)"},
		&cli.BoolFlag{Name: "no-project-instructions", Usage: "leave the project's AGENTS.md and CLAUDE.md files out of the system prompt"},
	}
}

// maxSystemFile bounds the zot home's SYSTEM.md.
const maxSystemFile = 256 << 10

// skillConfig sets cfg's skills, project instructions and, unless
// --system-prompt is given, the zot home's SYSTEM.md as the system
// prompt.
func skillConfig(cmd *cli.Command, stderr io.Writer, cfg *agentConfig) error {
	if cmd.Bool("no-skills") && cmd.Bool("with-skills") {
		return usagef("--no-skills and --with-skills contradict each other")
	}
	if cmd.Bool("no-skills") && cmd.IsSet("skills-dir") {
		return usagef("--no-skills and --skills-dir contradict each other")
	}
	cfg.ProjectInstructions = !cmd.Bool("no-project-instructions")
	h, herr := zotHome(stderr)
	if !cmd.Bool("no-skills") {
		dirs, err := skillDirs(cmd)
		if err != nil {
			return err
		}
		cfg.Skills = skills.Options{Dirs: dirs, Project: true}
		if herr == nil {
			cfg.Skills.Home = h.Dir
		}
	}
	if !cmd.IsSet("system-prompt") && herr == nil {
		text, err := systemFile(h)
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		cfg.SystemPrompt = text
	}
	return nil
}

// skillDirs are the --skills-dir folders, made absolute.
func skillDirs(cmd *cli.Command) ([]string, error) {
	var dirs []string
	for _, d := range cmd.StringSlice("skills-dir") {
		if strings.TrimSpace(d) == "" {
			return nil, usagef("--skills-dir needs a folder")
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usagef("--skills-dir %s: %v", d, err)
		}
		dirs = append(dirs, abs)
	}
	return dirs, nil
}

// systemFile is the text of the zot home's SYSTEM.md, "" when there is
// none (or it holds only white space).
func systemFile(h home.Home) (string, error) {
	path := h.SystemPrompt()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the system prompt: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSystemFile+1))
	if err != nil {
		return "", fmt.Errorf("reading the system prompt %s: %w", path, err)
	}
	if len(data) > maxSystemFile {
		return "", fmt.Errorf("the system prompt %s is larger than %d KiB", path, maxSystemFile>>10)
	}
	return strings.TrimSpace(string(data)), nil
}

// skillsCommand is `zot skills list|show`.
func skillsCommand(std streams) *cli.Command {
	allowed := []string{"cwd", "skills-dir", "json"}
	set := func(cmd *cli.Command) (*skills.Set, error) {
		dirs, err := skillDirs(cmd)
		if err != nil {
			return nil, err
		}
		cwd, err := workingDir(cmd.String("cwd"))
		if err != nil {
			return nil, err
		}
		o := skills.Options{Dirs: dirs, Project: true}
		if h, err := zotHome(std.err); err == nil {
			o.Home = h.Dir
		}
		return skills.Discover(o, cwd), nil
	}
	return &cli.Command{
		Name:            "skills",
		HideHelpCommand: true,
		Usage:           "list the skills a session here offers, or show one (see docs/skills.md)",
		Description: `A skill is a folder holding SKILL.md: YAML front matter with a name and a
description, then instructions, and any files beside it (scripts/,
references/). zot looks in the folders of --skills-dir, then the project's
.zot/skills, .agents/skills and .claude/skills (in each folder from the
working directory up to the repository's root, nearest first), then the zot
home's skills; of two skills of one name the first found wins and the other
is listed as shadowed. The model sees each skill's name and description and
loads its instructions and files with the skill tool when a task matches.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q for zot skills", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:            "list",
				HideHelpCommand: true,
				Usage:           "list the skills: offered, shadowed, and those that could not be read",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return usagef("zot skills list takes no arguments, got %q", cmd.Args().First())
					}
					if err := onlyFlags(cmd, "zot skills list", allowed); err != nil {
						return err
					}
					s, err := set(cmd)
					if err != nil {
						return err
					}
					return printSkills(std.out, s, cmd.Bool("json"))
				},
			},
			{
				Name:            "show",
				HideHelpCommand: true,
				Usage:           "print a skill's instructions, or a file of its folder (--file)",
				ArgsUsage:       "<name>",
				Flags:           []cli.Flag{&cli.StringFlag{Name: "file", Usage: "a file or folder inside the skill's folder, relative to it"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return usagef("zot skills show takes one skill name")
					}
					if err := onlyFlags(cmd, "zot skills show", allowed, "file"); err != nil {
						return err
					}
					s, err := set(cmd)
					if err != nil {
						return err
					}
					l, err := s.Load(cmd.Args().First(), cmd.String("file"))
					if err != nil {
						return &exitError{code: 1, msg: err.Error()}
					}
					if cmd.Bool("json") {
						res := wire.GetSkillResult{Skill: skillJSON(l.Skill), File: l.Path, Text: l.Text, Files: l.Files}
						if l.Truncated {
							res.Truncated = &l.Truncated
						}
						if l.Binary {
							res.Binary = &l.Binary
						}
						return writeJSON(std.out, res)
					}
					_, err = io.WriteString(plainText(std.out), skills.Render(l)+"\n")
					return err
				},
			},
		},
	}
}

// workingDir is dir made absolute, the process's working directory when
// empty.
func workingDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", &exitError{code: 1, msg: err.Error()}
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("--cwd %s: %v", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", usagef("--cwd %s is not a directory", abs)
	}
	return abs, nil
}

func skillJSON(sk skills.Skill) wire.SkillInfo {
	return wire.SkillInfo{Name: sk.Name, Description: sk.Description, Source: wire.SkillSource(sk.Source), Path: sk.File, Dir: sk.Dir, ShadowedBy: sk.ShadowedBy}
}

// printSkills prints the skills of s: as list_skills answers with
// --json, else a line each.
func printSkills(w io.Writer, s *skills.Set, asJSON bool) error {
	if asJSON {
		res := wire.ListSkillsResult{Skills: []wire.SkillInfo{}, Shadowed: []wire.SkillInfo{}, Problems: []wire.SkillProblem{}, Tool: s.Len() > 0}
		for _, sk := range s.Skills() {
			res.Skills = append(res.Skills, skillJSON(sk))
		}
		for _, sk := range s.Shadowed() {
			res.Shadowed = append(res.Shadowed, skillJSON(sk))
		}
		for _, p := range s.Problems() {
			res.Problems = append(res.Problems, wire.SkillProblem{Path: p.Path, Source: wire.SkillSource(p.Source), Message: p.Message})
		}
		return writeJSON(w, res)
	}
	var b strings.Builder
	if s.Len() == 0 {
		b.WriteString("no skills\n")
	}
	for _, sk := range s.Skills() {
		fmt.Fprintf(&b, "%s (%s, %s)\n  %s\n", sk.Name, sk.Source, sk.File, sk.Description)
	}
	for _, sk := range s.Shadowed() {
		fmt.Fprintf(&b, "shadowed: %s (%s, %s), by %s\n", sk.Name, sk.Source, sk.File, sk.ShadowedBy)
	}
	for _, p := range s.Problems() {
		fmt.Fprintf(&b, "not read: %s\n", p.Message)
	}
	_, err := io.WriteString(plainText(w), b.String())
	return err
}

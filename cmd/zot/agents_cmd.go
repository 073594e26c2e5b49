package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/subagent"
)

// agentJSON is one profile in `zot agents list|show --json`.
type agentJSON struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Tools        []string `json:"tools,omitempty"`
	Model        string   `json:"model,omitempty"`
	Source       string   `json:"source"`
	Path         string   `json:"path"`
	ShadowedBy   string   `json:"shadowed_by,omitempty"`
	Instructions string   `json:"instructions,omitempty"`
}

// agentsListJSON is `zot agents list --json`.
type agentsListJSON struct {
	Agents   []agentJSON `json:"agents"`
	Shadowed []agentJSON `json:"shadowed"`
	Problems []string    `json:"problems"`
}

func profileJSON(p subagent.Profile) agentJSON {
	return agentJSON{Name: p.Name, Description: p.Description, Tools: p.Tools, Model: p.Model, Source: p.Source, Path: p.Path, ShadowedBy: p.ShadowedBy}
}

// agentsCommand is `zot agents list|show`.
func agentsCommand(std streams) *cli.Command {
	allowed := []string{"cwd", "json"}
	catalog := func(cmd *cli.Command) (subagent.Catalog, error) {
		cwd, err := workingDir(cmd.String("cwd"))
		if err != nil {
			return subagent.Catalog{}, err
		}
		var dirs []subagent.Dir
		for _, d := range subagent.ProjectDirs {
			dirs = append(dirs, subagent.Dir{Path: filepath.Join(cwd, filepath.FromSlash(d)), Source: subagent.SourceProject})
		}
		if h, err := zotHome(std.err); err == nil {
			dirs = append(dirs, subagent.Dir{Path: h.Agents(), Source: subagent.SourceUser})
		}
		return subagent.Discover(dirs), nil
	}
	return &cli.Command{
		Name:            "agents",
		HideHelpCommand: true,
		Usage:           "list the agent profiles a session here offers the task tool, or show one (see docs/agents.md)",
		Description: `An agent profile is a Markdown file with YAML front matter (name,
description, tools, model) whose body is added to a sub-agent's system
prompt. zot reads the project's .zot/agents, then its .claude/agents, then
the zot home's agents; of two profiles of one name the first found wins and
the other is listed as shadowed.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q for zot agents", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:            "list",
				HideHelpCommand: true,
				Usage:           "list the agent profiles: offered, shadowed, and those that could not be read",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return usagef("zot agents list takes no arguments, got %q", cmd.Args().First())
					}
					if err := onlyFlags(cmd, "zot agents list", allowed); err != nil {
						return err
					}
					c, err := catalog(cmd)
					if err != nil {
						return err
					}
					return printAgents(std.out, c, cmd.Bool("json"))
				},
			},
			{
				Name:            "show",
				HideHelpCommand: true,
				Usage:           "print an agent profile: its settings and instructions",
				ArgsUsage:       "<name>",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return usagef("zot agents show takes one agent name")
					}
					if err := onlyFlags(cmd, "zot agents show", allowed); err != nil {
						return err
					}
					c, err := catalog(cmd)
					if err != nil {
						return err
					}
					p, ok := subagent.Find(c.Profiles, cmd.Args().First())
					if !ok {
						return &exitError{code: 1, msg: fmt.Sprintf("no agent profile %q here (zot agents list names them)", cmd.Args().First())}
					}
					if cmd.Bool("json") {
						j := profileJSON(p)
						j.Instructions = p.Instructions
						return writeJSON(std.out, j)
					}
					var b strings.Builder
					fmt.Fprintf(&b, "agent        %s\ndescription  %s\nsource       %s (%s)\n", p.Name, p.Description, p.Source, p.Path)
					if p.Tools != nil {
						fmt.Fprintf(&b, "tools        %s\n", strings.Join(p.Tools, ", "))
					}
					if p.Model != "" {
						fmt.Fprintf(&b, "model        %s\n", p.Model)
					}
					if p.Instructions != "" {
						b.WriteString("\n" + p.Instructions + "\n")
					}
					_, err = io.WriteString(plainText(std.out), b.String())
					return err
				},
			},
		},
	}
}

// printAgents prints the profiles of c: with --json as agentsListJSON,
// else a line or two each.
func printAgents(w io.Writer, c subagent.Catalog, asJSON bool) error {
	if asJSON {
		res := agentsListJSON{Agents: []agentJSON{}, Shadowed: []agentJSON{}, Problems: []string{}}
		for _, p := range c.Profiles {
			res.Agents = append(res.Agents, profileJSON(p))
		}
		for _, p := range c.Shadowed {
			res.Shadowed = append(res.Shadowed, profileJSON(p))
		}
		for _, e := range c.Problems {
			res.Problems = append(res.Problems, e.Error())
		}
		return writeJSON(w, res)
	}
	var b strings.Builder
	b.WriteString("general (built in)\n  a general-purpose agent with all of the session's tools\n")
	for _, p := range c.Profiles {
		fmt.Fprintf(&b, "%s (%s, %s)\n  %s\n", p.Name, p.Source, p.Path, p.Description)
	}
	for _, p := range c.Shadowed {
		fmt.Fprintf(&b, "shadowed: %s (%s, %s), by %s\n", p.Name, p.Source, p.Path, p.ShadowedBy)
	}
	for _, e := range c.Problems {
		fmt.Fprintf(&b, "not read: %v\n", e)
	}
	_, err := io.WriteString(plainText(w), b.String())
	return err
}

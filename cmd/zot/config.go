package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/internal/settings"
)

// configKeys are the keys zot config reads and writes; the lists hold
// permission rules.
var (
	configScalars = []string{"provider", "model", "mode"}
	configLists   = []string{"permissions.allow", "permissions.deny"}
)

// configScope is the file, and the place in it, a zot config command
// works on.
type configScope struct {
	path    string   // the file
	project string   // the project folder, for .zot/settings.json
	prefix  []string // where the keys are in the file: folders/<dir> for --folder
}

// scopeOf is the scope the flags choose: config.json (everywhere, or
// --folder DIR's entry) or --project's .zot/settings.json.
func scopeOf(cmd *cli.Command, std streams) (configScope, error) {
	if cmd.Bool("project") && cmd.IsSet("folder") {
		return configScope{}, usagef("--project and --folder contradict each other")
	}
	if cmd.Bool("project") {
		dir, err := os.Getwd()
		if err != nil {
			return configScope{}, &exitError{code: 1, msg: err.Error()}
		}
		return configScope{path: filepath.Join(dir, settings.ProjectFile), project: dir}, nil
	}
	h, err := zotHome(std.err)
	if err != nil {
		return configScope{}, &exitError{code: 1, msg: err.Error()}
	}
	sc := configScope{path: settings.ConfigFile(h.Dir)}
	if cmd.IsSet("folder") {
		dir, err := filepath.Abs(cmd.String("folder"))
		if err != nil {
			return configScope{}, usagef("--folder: %v", err)
		}
		sc.prefix = []string{"folders", dir}
	}
	return sc, nil
}

// keyPath is where key is in the scope's file; it refuses a key the
// scope does not hold.
func (sc configScope) keyPath(key string) ([]string, bool, error) {
	switch {
	case slices.Contains(configLists, key):
		return append(slices.Clone(sc.prefix), strings.Split(key, ".")...), true, nil
	case slices.Contains(configScalars, key):
		if sc.project != "" || sc.prefix != nil {
			return nil, false, usagef("%s is kept for every folder: drop --project and --folder", key)
		}
		return []string{key}, false, nil
	}
	return nil, false, usagef("unknown key %q: the keys are %s", key, strings.Join(slices.Concat(configScalars, configLists), ", "))
}

// read checks the scope's file and returns its object, refusing one that
// does not parse.
func (sc configScope) read() (map[string]any, error) {
	var err error
	if sc.project != "" {
		_, err = settings.LoadProject(sc.project)
	} else {
		_, err = settings.LoadConfig(sc.path)
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error(), cause: err}
	}
	m := map[string]any{}
	data, err := os.ReadFile(sc.path)
	if err != nil {
		if os.IsNotExist(err) {
			return m, nil
		}
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("%s: %v", sc.path, err)}
	}
	return m, nil
}

// update changes the scope's file, refusing one that does not parse.
func (sc configScope) update(change func(*settings.Doc) error) error {
	var err error
	if sc.project != "" {
		err = settings.UpdateProject(sc.project, change)
	} else {
		err = settings.Update(sc.path, change)
	}
	if err != nil {
		if _, ok := err.(*exitError); ok {
			return err
		}
		return &exitError{code: 1, msg: err.Error(), cause: err}
	}
	return nil
}

// lookup returns the value at the path at of m.
func lookup(m map[string]any, at []string) (any, bool) {
	var cur any = m
	for _, k := range at {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// configFlags are the flags of every zot config command.
func configFlags(json bool) []cli.Flag {
	f := []cli.Flag{
		&cli.BoolFlag{Name: "project", Usage: "the permission rules of the working directory's .zot/settings.json (project content: its allow rules apply once the folder is trusted)"},
		&cli.StringFlag{Name: "folder", Usage: "the permission rules config.json keeps for the folder DIR (where \"allow always\" answers for a project are saved)"},
	}
	if json {
		f = append(f, &cli.BoolFlag{Name: "json", Usage: "print JSON"})
	}
	return f
}

// configCommand is `zot config get|set|add|remove|unset|list`.
func configCommand(std streams) *cli.Command {
	keys := strings.Join(slices.Concat(configScalars, configLists), ", ")
	return &cli.Command{
		Name:            "config",
		HideHelpCommand: true,
		Usage:           "show and change the settings: the last provider, model and mode, and permission rules (see docs/settings.md)",
		Description: `The settings live in config.json in the zot home: the provider, model and
permission mode the interactive client used last (every door starts with
that provider and model when no flag names them), and permission rules
for every folder (permissions.allow, permissions.deny) or for one
(--folder DIR, where "allow always" answers for a project are saved). A
project's own rules live in its .zot/settings.json (--project).

A rule is a tool, optionally with a pattern: bash(go test *) runs every
"go test" command without asking, edit(src/**) every edit under src,
read(.env) with deny never reads .env. Deny wins over allow.

Keys: ` + keys + `. A settings file that does not parse is never written
over: every zot config command refuses it, naming the line and column.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q for zot config", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:            "list",
				HideHelpCommand: true,
				Usage:           "print every setting (--json: the file's object)",
				Flags:           configFlags(true),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 0 {
						return usagef("usage: zot config list [--project | --folder DIR] [--json]")
					}
					sc, err := scopeOf(cmd, std)
					if err != nil {
						return err
					}
					m, err := sc.read()
					if err != nil {
						return err
					}
					if sc.prefix != nil {
						v, _ := lookup(m, sc.prefix)
						obj, _ := v.(map[string]any)
						if obj == nil {
							obj = map[string]any{}
						}
						m = obj
					}
					if cmd.Bool("json") {
						return writeJSON(std.out, m)
					}
					return listConfig(std.out, m, "")
				},
			},
			{
				Name:            "get",
				HideHelpCommand: true,
				Usage:           "print one setting (a list one item a line); exit 1 when it is not set",
				ArgsUsage:       "KEY",
				Flags:           configFlags(true),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return usagef("usage: zot config get KEY [--project | --folder DIR] [--json] (keys: %s)", keys)
					}
					sc, err := scopeOf(cmd, std)
					if err != nil {
						return err
					}
					at, _, err := sc.keyPath(cmd.Args().First())
					if err != nil {
						return err
					}
					m, err := sc.read()
					if err != nil {
						return err
					}
					v, ok := lookup(m, at)
					if cmd.Bool("json") {
						return writeJSON(std.out, v)
					}
					if !ok {
						return &exitError{code: 1, msg: cmd.Args().First() + " is not set"}
					}
					return listConfig(std.out, v, "")
				},
			},
			{
				Name:            "set",
				HideHelpCommand: true,
				Usage:           "set a setting: one value, or for a list every item",
				ArgsUsage:       "KEY VALUE...",
				Flags:           configFlags(false),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return changeConfig(cmd, std, "set")
				},
			},
			{
				Name:            "add",
				HideHelpCommand: true,
				Usage:           "add rules to a list (permissions.allow, permissions.deny)",
				ArgsUsage:       "KEY RULE...",
				Flags:           configFlags(false),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return changeConfig(cmd, std, "add")
				},
			},
			{
				Name:            "remove",
				HideHelpCommand: true,
				Usage:           "take rules out of a list",
				ArgsUsage:       "KEY RULE...",
				Flags:           configFlags(false),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return changeConfig(cmd, std, "remove")
				},
			},
			{
				Name:            "unset",
				HideHelpCommand: true,
				Usage:           "remove a setting",
				ArgsUsage:       "KEY",
				Flags:           configFlags(false),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return changeConfig(cmd, std, "unset")
				},
			},
		},
	}
}

// changeConfig is zot config set, add, remove and unset.
func changeConfig(cmd *cli.Command, std streams, verb string) error {
	args := cmd.Args().Slice()
	switch {
	case verb == "unset" && len(args) != 1:
		return usagef("usage: zot config unset KEY [--project | --folder DIR]")
	case verb != "unset" && len(args) < 2:
		return usagef("usage: zot config %s KEY VALUE... [--project | --folder DIR]", verb)
	}
	sc, err := scopeOf(cmd, std)
	if err != nil {
		return err
	}
	key, values := args[0], args[1:]
	at, isList, err := sc.keyPath(key)
	if err != nil {
		return err
	}
	if !isList && verb != "unset" {
		if verb != "set" {
			return usagef("%s is one value: use zot config set %s VALUE", key, key)
		}
		if len(values) != 1 {
			return usagef("%s takes one value, got %d", key, len(values))
		}
		if err := checkScalar(key, values[0]); err != nil {
			return err
		}
	}
	for _, v := range values {
		if isList {
			if _, err := settings.ParseRule(v); err != nil {
				return usagef("%s: %v", key, err)
			}
		}
	}
	var missing []string
	err = sc.update(func(d *settings.Doc) error {
		switch {
		case verb == "unset":
			if !d.Delete(at) {
				missing = append(missing, key)
			}
			return nil
		case !isList:
			return d.Set(at, values[0])
		case verb == "set":
			return d.SetList(at, canonical(values))
		case verb == "add":
			for _, v := range canonical(values) {
				if err := d.Add(at, v); err != nil {
					return err
				}
			}
			return nil
		}
		for _, v := range canonical(values) {
			found, err := d.Remove(at, v)
			if err != nil {
				return err
			}
			if !found {
				missing = append(missing, v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		fmt.Fprintf(std.err, "zot: not there, nothing to remove: %s\n", strings.Join(missing, ", "))
	}
	return nil
}

// canonical writes each rule as zot writes it.
func canonical(rules []string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		p, _ := settings.ParseRule(r) // checked before
		out[i] = p.String()
	}
	return out
}

// checkScalar refuses a value the key cannot take.
func checkScalar(key, v string) error {
	switch key {
	case "provider":
		if !registry.Known(v) {
			return usagef("%s", (&registry.UnknownError{Name: v}).Error())
		}
	case "mode":
		if !slices.Contains(settings.Modes, v) {
			return usagef("mode must be one of %s, got %q", strings.Join(settings.Modes, ", "), v)
		}
	case "model":
		if strings.TrimSpace(v) == "" {
			return usagef("model must not be empty (zot config unset model forgets it)")
		}
	}
	return nil
}

// listConfig prints v as lines `key = value`, a list one item a line,
// under the dotted prefix.
func listConfig(w io.Writer, v any, prefix string) error {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if err := listConfig(w, v[k], p); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for _, it := range v {
			if err := listConfig(w, it, prefix); err != nil {
				return err
			}
		}
		return nil
	}
	text := fmt.Sprint(v)
	if b, err := json.Marshal(v); err == nil && !isString(v) {
		text = string(b)
	}
	if prefix == "" {
		_, err := fmt.Fprintln(w, text)
		return err
	}
	_, err := fmt.Fprintf(w, "%s = %s\n", prefix, text)
	return err
}

func isString(v any) bool { _, ok := v.(string); return ok }

// rememberedDefaults gives cfg the provider and model the interactive
// client used last (config.json), where no flag names them: the
// provider when --provider is not given, its model when --model is not
// given and the provider is the remembered one. A config.json that does
// not parse changes nothing here (the session says so when it starts).
func rememberedDefaults(cmd *cli.Command, std io.Writer, provider, model *string) {
	if cmd.IsSet("provider") && cmd.IsSet("model") {
		return
	}
	h, err := zotHome(std)
	if err != nil {
		return
	}
	last, err := settings.Recall(h.Dir)
	if err != nil || last.Provider == "" || !registry.Known(last.Provider) {
		return
	}
	if !cmd.IsSet("provider") {
		*provider = last.Provider
	}
	if !cmd.IsSet("model") && *provider == last.Provider {
		*model = last.Model
	}
}

// permissionRules are the permission rules of every session a command
// starts: the zot home's config.json and the project's
// .zot/settings.json (its allow rules in a trusted folder, or with
// --trust-project).
func permissionRules(cmd *cli.Command, stderr io.Writer) engine.PermissionRules {
	p := engine.PermissionRules{Project: true, TrustProject: cmd.Bool("trust-project")}
	if h, err := zotHome(stderr); err == nil {
		p.Home = h.Dir
	}
	return p
}

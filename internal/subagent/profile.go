// Package subagent holds zot's sub-agents: the task tool, with which the
// model hands a piece of work to a child session that has a transcript of
// its own and returns its result record, and the named agent profiles
// (Markdown files with front matter) the model may choose for it
// (docs/agents.md). The child sessions themselves are the engine's: a
// Runner given to NewTool starts them.
package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"zot.dev/zot/internal/frontmatter"
)

// Where profiles come from, as Profile.Source names it.
const (
	// SourceProject is a project's ./.zot/agents folder.
	SourceProject = "project"
	// SourceUser is the zot home's agents folder.
	SourceUser = "user"
)

// ProjectDirs are where a project keeps its agent profiles, under its
// folder, the first winning a name: zot's own, then Claude Code's.
var ProjectDirs = [...]string{".zot/agents", ".claude/agents"}

// maxProfileBytes bounds a profile file.
const maxProfileBytes = 256 << 10

// Profile is a named agent: what the model is told it is for, the tools
// and model its sub-agents get, and the instructions they follow.
type Profile struct {
	// Name selects the profile (the task tool's agent argument).
	Name string
	// Description tells the model when to choose it.
	Description string
	// Tools are the tools its sub-agents may use, among the parent's;
	// nil means all of the parent's.
	Tools []string
	// Model is the model of its sub-agents, of the session's provider;
	// "" (or "inherit") means the parent's.
	Model string
	// Instructions are the file's body, added to the sub-agent's system
	// prompt.
	Instructions string
	// Path is the file it was read from; Source says whose it is
	// (SourceProject, SourceUser).
	Path, Source string
	// ShadowedBy is, for a profile a profile of the same name found
	// earlier hides, that profile's file (see Discover).
	ShadowedBy string
}

// Catalog is what Discover finds in the folders of profiles.
type Catalog struct {
	// Profiles are those offered, sorted by name.
	Profiles []Profile
	// Shadowed are those a profile of the same name found earlier hides
	// (each with ShadowedBy), in the order found.
	Shadowed []Profile
	// Problems are the files that could not be used, one line each.
	Problems []error
}

// Dir is a folder of profiles and whose it is.
type Dir struct {
	Path, Source string
}

// validName reports whether name may name a profile: lower-case
// letters, digits, - and _, starting with a letter or digit, at most 64
// bytes, as the agents' files of other tools name theirs.
func validName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '-' || name[0] == '_' {
		return false
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// Load reads the profiles (<name>.md) of dirs. A name found in an earlier
// folder shadows the same name in a later one, so a project's profile
// wins over the user's of that name. A folder that does not exist is
// skipped; a file that cannot be used is left out and reported among
// the problems, one line each naming the file and field. The profiles
// come sorted by name.
func Load(dirs []Dir) ([]Profile, []error) {
	c := Discover(dirs)
	return c.Profiles, c.Problems
}

// Discover reads the profiles of dirs as Load does, and keeps those
// shadowed by a profile of the same name found earlier.
func Discover(dirs []Dir) Catalog {
	var (
		out      []Profile
		shadowed []Profile
		problems []error
		seen     = map[string]string{} // name → file
	)
	for _, d := range dirs {
		if d.Path == "" {
			continue
		}
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, fmt.Errorf("agent profiles: %w", err))
			}
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			p, err := ReadFile(filepath.Join(d.Path, e.Name()))
			if err != nil {
				problems = append(problems, err)
				continue
			}
			p.Source = d.Source
			if by, ok := seen[p.Name]; ok {
				p.ShadowedBy = by
				shadowed = append(shadowed, p)
				continue
			}
			seen[p.Name] = p.Path
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return Catalog{Profiles: out, Shadowed: shadowed, Problems: problems}
}

// ReadFile reads one profile. Its name is the front matter's name, else
// the file's name without .md; a description is required; tools is a
// list (or a comma-separated string) of tool names; model a model id or
// inherit (or a family name of Claude Code's: sonnet, opus, haiku, which
// also mean the session's model). Keys it does not know are ignored.
func ReadFile(path string) (Profile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Profile{}, fmt.Errorf("agent profile: %w", err)
	}
	if st.Size() > maxProfileBytes {
		return Profile{}, &frontmatter.Error{Path: path, Msg: fmt.Sprintf("the file is larger than %d KiB", maxProfileBytes>>10)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("agent profile: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a profile from data; path names it in errors.
func Parse(path string, data []byte) (Profile, error) {
	doc, err := frontmatter.Parse(path, data)
	if err != nil {
		return Profile{}, err
	}
	p := Profile{Path: path, Instructions: strings.TrimSpace(doc.Body)}
	if p.Name, err = doc.String("name"); err != nil {
		return Profile{}, err
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), ".md")
		if !validName(p.Name) {
			return Profile{}, &frontmatter.Error{Path: path, Field: "name", Msg: fmt.Sprintf("required: the file's name %q is not a profile name (lower-case letters, digits, - and _)", p.Name)}
		}
	} else if !validName(p.Name) {
		return Profile{}, doc.Errorf("name", "%q is not a profile name: lower-case letters, digits, - and _, at most 64", p.Name)
	}
	if p.Description, err = doc.String("description"); err != nil {
		return Profile{}, err
	}
	if strings.TrimSpace(p.Description) == "" {
		return Profile{}, doc.Errorf("description", "required: say when the model should choose this agent")
	}
	p.Description = strings.Join(strings.Fields(p.Description), " ")
	if _, ok := doc.Get("tools"); ok {
		list, err := doc.Strings("tools")
		if err != nil {
			return Profile{}, err
		}
		p.Tools = make([]string, 0, len(list))
		for _, t := range list {
			// The file of another agent may write Read or Grep: zot's
			// tools are lower case, and Claude Code's Glob is zot's find.
			t = strings.ToLower(t)
			if t == "glob" {
				t = "find"
			}
			p.Tools = append(p.Tools, t)
		}
	}
	if p.Model, err = doc.String("model"); err != nil {
		return Profile{}, err
	}
	switch p.Model {
	case "inherit", "sonnet", "opus", "haiku":
		// inherit, and the family names Claude Code's profiles use,
		// which name no model id here: the session's model.
		p.Model = ""
	}
	return p, nil
}

// Find returns the profile named name.
func Find(list []Profile, name string) (Profile, bool) {
	i := slices.IndexFunc(list, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return list[i], true
}

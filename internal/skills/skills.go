// Package skills finds a session's skills and loads them when the model
// asks (docs/skills.md).
//
// A skill is a folder holding SKILL.md: YAML front matter with its name
// and description, then the instructions, with any files beside them
// (scripts/, references/, templates). The names and descriptions go into
// the system prompt; a body or a file is read only when the model calls
// the skill tool, and only from inside that skill's folder. The shape is
// the one Claude Code, Codex and other agents read, so their skills work
// as they are.
//
// Skills are found in this order, and of two with one name the first wins
// (the other is listed as shadowed): the folders given with --skills-dir,
// then the project's .zot/skills, .agents/skills and .claude/skills in
// each folder from the working directory up to its repository's root
// (nearest first), then the zot home's skills.
package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"zot.dev/zot/internal/frontmatter"
	"zot.dev/zot/internal/instructions"
)

// Source says where a skill was found.
type Source string

const (
	// FromFlag is a folder given with --skills-dir (Options.Dirs).
	FromFlag Source = "flag"
	// FromProject is a folder of the project.
	FromProject Source = "project"
	// FromUser is the zot home's skills folder.
	FromUser Source = "user"
)

// ProjectFolders are the folders of a project that hold skills, relative
// to each folder from the working directory up to the repository's root,
// in the order looked in.
// (Slash-separated: filepath.Join takes them on every system, and a
// literal costs no package initialisation.)
var ProjectFolders = []string{".zot/skills", ".agents/skills", ".claude/skills"}

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Limits of a skill, as the Agent Skills format sets them.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	// MaxFileBytes bounds SKILL.md and what the skill tool returns of
	// one file.
	MaxFileBytes = 256 << 10
)

// Options says where to look for skills. The zero value finds none.
type Options struct {
	// Dirs are folders of skills (each a folder of skill folders, or one
	// skill's folder), looked in first and in order. Relative paths are
	// taken from CWD.
	Dirs []string
	// Project looks in the project's folders (ProjectFolders) from CWD up
	// to its repository's root.
	Project bool
	// Home is the zot home; its skills folder is looked in last. Empty:
	// no user skills.
	Home string
}

// On reports whether o can find any skill.
func (o Options) On() bool { return len(o.Dirs) > 0 || o.Project || o.Home != "" }

// Skill is one skill found.
type Skill struct {
	// Name is the skill's name: its front matter's, or its folder's.
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// Dir is the skill's folder, its real path (symbolic links resolved).
	Dir string
	// File is its SKILL.md.
	File string
	// Source says where it was found, and Root is the folder of skills
	// it was found in.
	Source Source
	Root   string
	// ShadowedBy, for a skill another of the same name hides, is that
	// skill's File.
	ShadowedBy string
}

// Problem is a skill that could not be read: a SKILL.md whose front
// matter does not parse or lacks a field, a folder that cannot be read.
type Problem struct {
	// Path is the file or folder.
	Path   string
	Source Source
	// Message is one line, naming the file, the line and the field.
	Message string
}

// Set is the skills of a session.
type Set struct {
	active   []Skill // by name
	shadowed []Skill
	problems []Problem
}

// Skills returns the skills the session offers, by name.
func (s *Set) Skills() []Skill {
	if s == nil {
		return nil
	}
	return s.active
}

// Shadowed returns the skills hidden by one found earlier of the same
// name, in the order found.
func (s *Set) Shadowed() []Skill {
	if s == nil {
		return nil
	}
	return s.shadowed
}

// Problems returns the skills that could not be read, in the order found.
func (s *Set) Problems() []Problem {
	if s == nil {
		return nil
	}
	return s.problems
}

// Len is the number of skills offered.
func (s *Set) Len() int { return len(s.Skills()) }

// Lookup returns the offered skill of that name.
func (s *Set) Lookup(name string) (Skill, bool) {
	for _, sk := range s.Skills() {
		if sk.Name == name {
			return sk, true
		}
	}
	return Skill{}, false
}

// root is one folder of skills to look in.
type root struct {
	dir    string
	source Source
}

// roots are the folders Discover looks in for cwd, in order.
func roots(o Options, cwd string) []root {
	var rs []root
	for _, d := range o.Dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		rs = append(rs, root{filepath.Clean(d), FromFlag})
	}
	if o.Project {
		for _, d := range instructions.Dirs(cwd) {
			for _, f := range ProjectFolders {
				rs = append(rs, root{filepath.Join(d, f), FromProject})
			}
		}
	}
	if o.Home != "" {
		rs = append(rs, root{filepath.Join(o.Home, "skills"), FromUser})
	}
	return rs
}

// Discover finds the skills o names for the working directory cwd (an
// absolute path). A folder of skills that does not exist is skipped; a
// skill that cannot be read is a Problem, and the others are still
// found.
func Discover(o Options, cwd string) *Set {
	s := &Set{}
	byName := map[string]string{}
	seenDir := map[string]bool{}
	for _, r := range roots(o, cwd) {
		for _, d := range skillDirs(r, s) {
			if seenDir[d.real] {
				continue // the same folder reached twice (a link, a repeated flag)
			}
			seenDir[d.real] = true
			sk, err := read(d.real, d.dir)
			if errors.Is(err, errNoSkill) {
				continue
			}
			if err != nil {
				s.problems = append(s.problems, Problem{Path: filepath.Join(d.dir, FileName), Source: r.source, Message: err.Error()})
				continue
			}
			sk.Source, sk.Root = r.source, r.dir
			if first, ok := byName[sk.Name]; ok {
				sk.ShadowedBy = first
				s.shadowed = append(s.shadowed, sk)
				continue
			}
			byName[sk.Name] = sk.File
			s.active = append(s.active, sk)
		}
	}
	slices.SortStableFunc(s.active, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// skillDir is a folder that may be a skill: the path it was found by,
// and its real path.
type skillDir struct{ dir, real string }

// skillDirs lists the folders of r that may be skills: r itself when it
// holds SKILL.md, else its folders (and links to folders) by name,
// hidden ones left out. The root's real path is resolved once; only an
// entry that is a link is resolved on its own.
func skillDirs(r root, s *Set) []skillDir {
	realRoot, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			s.problems = append(s.problems, Problem{Path: r.dir, Source: r.source, Message: fmt.Sprintf("%s: %v", r.dir, unwrap(err))})
		} else if r.source == FromFlag {
			s.problems = append(s.problems, Problem{Path: r.dir, Source: r.source, Message: fmt.Sprintf("%s: no such folder", r.dir)})
		}
		return nil
	}
	if st, err := os.Stat(filepath.Join(realRoot, FileName)); err == nil && st.Mode().IsRegular() {
		return []skillDir{{r.dir, realRoot}}
	}
	entries, err := os.ReadDir(realRoot)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ENOTDIR):
			if r.source == FromFlag {
				s.problems = append(s.problems, Problem{Path: r.dir, Source: r.source, Message: fmt.Sprintf("%s: not a folder", r.dir)})
			}
		default:
			s.problems = append(s.problems, Problem{Path: r.dir, Source: r.source, Message: fmt.Sprintf("%s: %v", r.dir, unwrap(err))})
		}
		return nil
	}
	var dirs []skillDir
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(r.dir, e.Name())
		switch {
		case e.IsDir():
			dirs = append(dirs, skillDir{dir, filepath.Join(realRoot, e.Name())})
		case e.Type()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				continue // a dangling link is no skill
			}
			if st, err := os.Stat(real); err == nil && st.IsDir() {
				dirs = append(dirs, skillDir{dir, real})
			}
		}
	}
	return dirs
}

// unwrap drops the operation and path an *os.PathError adds.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// errNoSkill is read's answer for a folder without a SKILL.md.
var errNoSkill = errors.New("no SKILL.md")

// read reads the skill in the folder real (its real path; shown is the
// path it was found by, named in errors).
func read(real, shown string) (Skill, error) {
	file := filepath.Join(shown, FileName)
	data, err := readBounded(real)
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, errNoSkill
	}
	if err != nil {
		return Skill{}, fmt.Errorf("%s: %w", file, err)
	}
	doc, err := frontmatter.Parse(file, data)
	if err != nil {
		return Skill{}, err
	}
	if !doc.HasFront {
		return Skill{}, fmt.Errorf("%s: no front matter: SKILL.md must start with a --- block giving name and description", file)
	}
	folder := filepath.Base(shown)
	name, err := doc.String("name")
	if err != nil {
		return Skill{}, err
	}
	if name == "" {
		name = folder
	}
	if msg := checkName(name); msg != "" {
		if _, given := doc.Get("name"); given {
			return Skill{}, doc.Errorf("name", "%s", msg)
		}
		return Skill{}, fmt.Errorf("%s: name: the folder's name %q, taken as the skill's name, %s", file, name, strings.TrimPrefix(msg, "must "))
	}
	if name != folder {
		return Skill{}, doc.Errorf("name", "%q must be the name of the skill's folder, %q", name, folder)
	}
	desc, err := doc.String("description")
	if err != nil {
		return Skill{}, err
	}
	desc = strings.Join(strings.Fields(desc), " ")
	switch {
	case desc == "":
		return Skill{}, doc.Errorf("description", "required: say what the skill does and when to use it")
	case utf8.RuneCountInString(desc) > MaxDescriptionLen:
		return Skill{}, doc.Errorf("description", "%d characters; at most %d", utf8.RuneCountInString(desc), MaxDescriptionLen)
	}
	return Skill{Name: name, Description: desc, Dir: real, File: file}, nil
}

// checkName returns what is wrong with a skill's name, "" when nothing:
// 1 to 64 lowercase letters, digits and single hyphens, starting and
// ending with a letter or digit.
func checkName(name string) string {
	if len(name) > MaxNameLen {
		return fmt.Sprintf("must be at most %d characters, got %d", MaxNameLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(name)-1 && name[i-1] != '-':
		default:
			return fmt.Sprintf("must be lowercase letters, digits and single hyphens, not starting or ending with one: %q", name)
		}
	}
	if name == "" {
		return "must not be empty"
	}
	return ""
}

// readBounded reads the SKILL.md of the folder real, as the skill tool
// does: inside the folder (a link leading out of it is refused), a
// regular file (a named pipe or a device is refused without waiting on
// it), of at most MaxFileBytes.
func readBounded(real string) ([]byte, error) {
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, unwrap(err)
	}
	defer root.Close()
	data, err := readRoot(root, FileName)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fs.ErrNotExist
	case errors.Is(err, ErrOutside):
		return nil, errors.New("a link leading out of the skill's folder")
	}
	return data, err
}

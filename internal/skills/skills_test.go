package skills

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, root string, files map[string]string) {
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

func skill(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n" + name + " body\n"
}

// TestDiscoverRoots: a --skills-dir may be one skill's own folder; a
// folder reached twice counts once; a skill folder that is a link is
// read at its real path; a --skills-dir that does not exist is a
// problem, a project folder that does not exist is not.
func TestDiscoverRoots(t *testing.T) {
	base := t.TempDir()
	write(t, base, map[string]string{
		"one/SKILL.md":             skill("one"),
		"many/two/SKILL.md":        skill("two"),
		"many/.hidden/SKILL.md":    skill("hidden"),
		"elsewhere/three/SKILL.md": skill("three"),
		"elsewhere/three/a.txt":    "a\n",
	})
	if err := os.Symlink(filepath.Join(base, "elsewhere", "three"), filepath.Join(base, "many", "three")); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "work")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	set := Discover(Options{Dirs: []string{filepath.Join(base, "one"), "../many", filepath.Join(base, "many"), filepath.Join(base, "missing")}, Project: true}, cwd)
	var names []string
	for _, sk := range set.Skills() {
		names = append(names, sk.Name+":"+string(sk.Source))
	}
	if !reflect.DeepEqual(names, []string{"one:flag", "three:flag", "two:flag"}) {
		t.Errorf("skills %v", names)
	}
	if len(set.Shadowed()) != 0 {
		t.Errorf("shadowed %+v: a folder reached twice counts once", set.Shadowed())
	}
	if p := set.Problems(); len(p) != 1 || p[0].Message != filepath.Join(base, "missing")+": no such folder" {
		t.Errorf("problems %+v", p)
	}
	three, _ := set.Lookup("three")
	if three.Dir != filepath.Join(base, "elsewhere", "three") || three.File != filepath.Join(base, "many", "three", "SKILL.md") {
		t.Errorf("a linked skill: dir %s, file %s", three.Dir, three.File)
	}
	l, err := set.Load("three", "a.txt")
	if err != nil || l.Text != "a\n" {
		t.Errorf("a file of a linked skill: %+v, %v", l, err)
	}
	if (Options{}).On() || Discover(Options{}, cwd).Len() != 0 {
		t.Error("the zero Options found skills")
	}
}

// TestLoadFiles: a body lists the folder's files but hidden ones; a
// binary file is named, not shown; a long file is cut at the bound.
func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"s/SKILL.md":       skill("s"),
		"s/.secret":        "x",
		"s/.git/config":    "x",
		"s/scripts/run.sh": "echo\n",
		"s/big.txt":        strings.Repeat("é", MaxFileBytes),
		"s/bin.dat":        "\x00\x01\x02",
	})
	set := Discover(Options{Dirs: []string{dir}}, dir)
	l, err := set.Load("s", "")
	if err != nil || l.Text != "s body" || !reflect.DeepEqual(l.Files, []string{"big.txt", "bin.dat", "scripts/run.sh"}) {
		t.Errorf("body: %+v, %v", l, err)
	}
	if l, err := set.Load("s", "bin.dat"); err != nil || !l.Binary || !strings.Contains(l.Text, "binary file of 3 bytes") {
		t.Errorf("binary: %+v, %v", l, err)
	}
	l, err = set.Load("s", "big.txt")
	if err != nil || !l.Truncated || len(l.Text) > MaxFileBytes || !strings.HasSuffix(l.Text, "é") {
		t.Errorf("big: truncated %v, %d bytes, %v", l.Truncated, len(l.Text), err)
	}
	if !strings.Contains(Render(l), "[cut: only the first 256 KiB of big.txt are shown]") {
		t.Error("a cut file is not said to be cut")
	}
	for _, bad := range []string{"/etc/passwd", "..", "../s/SKILL.md", "scripts/../../s"} {
		if _, err := set.Load("s", bad); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: %v, want ErrOutside", bad, err)
		}
	}
}

// BenchmarkDiscover: finding and reading 20 skills of a project (what a
// session's start pays for them).
func BenchmarkDiscover(b *testing.B) {
	dir := b.TempDir()
	for i := range 20 {
		name := "skill-" + string(rune('a'+i))
		p := filepath.Join(dir, ".zot", "skills", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		text := "---\nname: " + name + "\ndescription: >\n  What " + name + " does,\n  and when to use it.\nallowed-tools: Read, Bash\nmetadata:\n  version: \"1.0\"\n---\n" + strings.Repeat("Body line.\n", 200)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if s := Discover(Options{Project: true}, dir); s.Len() != 20 {
			b.Fatalf("%d skills", s.Len())
		}
	}
}

// TestDescriptionCountsCharacters: the description's bound is 1024
// characters, as the docs and the error say, not 1024 bytes: one in a
// script of two-byte letters is taken up to 1024 of them.
func TestDescriptionCountsCharacters(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("é", MaxDescriptionLen)
	write(t, dir, map[string]string{
		"fits/SKILL.md": "---\nname: fits\ndescription: " + long + "\n---\nbody\n",
		"over/SKILL.md": "---\nname: over\ndescription: " + long + "é\n---\nbody\n",
	})
	set := Discover(Options{Dirs: []string{dir}}, dir)
	if _, ok := set.Lookup("fits"); !ok {
		t.Errorf("a description of %d two-byte characters was refused: %+v", MaxDescriptionLen, set.Problems())
	}
	p := set.Problems()
	if _, ok := set.Lookup("over"); ok || len(p) != 1 || !strings.Contains(p[0].Message, "1025 characters") {
		t.Errorf("a description of 1025 characters: problems %+v", p)
	}
}

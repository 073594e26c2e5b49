package tools

import "testing"

func TestGitignoreRules(t *testing.T) {
	type probe struct {
		path  string
		isDir bool
		want  bool
	}
	cases := []struct {
		name   string
		file   string
		probes []probe
	}{
		{"comments and blanks", "# a comment\n\n   \n*.log\n", []probe{
			{"x.log", false, true}, {"a/b/x.log", false, true}, {"# a comment", false, false}, {"x.txt", false, false},
		}},
		{"negation", "*.log\n!keep.log\n", []probe{
			{"a.log", false, true}, {"keep.log", false, false}, {"sub/keep.log", false, false},
		}},
		{"negation order matters", "!keep.log\n*.log\n", []probe{
			{"keep.log", false, true},
		}},
		{"dir only", "build/\n", []probe{
			{"build", true, true}, {"build", false, false}, {"src/build", true, true},
		}},
		{"anchored by leading slash", "/todo.txt\n", []probe{
			{"todo.txt", false, true}, {"sub/todo.txt", false, false},
		}},
		{"anchored by inner slash", "doc/*.html\n", []probe{
			{"doc/a.html", false, true}, {"x/doc/a.html", false, false}, {"doc/sub/a.html", false, false},
		}},
		{"question mark and class", "file?.[ch]\n", []probe{
			{"file1.c", false, true}, {"fileA.h", false, true}, {"file12.c", false, false}, {"file1.o", false, false},
		}},
		{"leading double star", "**/logs\n", []probe{
			{"logs", true, true}, {"a/b/logs", true, true}, {"a/logsx", true, false},
		}},
		{"trailing double star", "vendor/**\n", []probe{
			{"vendor/a.go", false, true}, {"vendor/x/y", true, true}, {"vendor", true, false},
		}},
		{"middle double star", "a/**/z.txt\n", []probe{
			{"a/z.txt", false, true}, {"a/b/c/z.txt", false, true}, {"b/a/z.txt", false, false},
		}},
		{"escapes and trailing spaces", "\\#hash\n\\!bang\nspace\\ \ntrail   \n", []probe{
			{"#hash", false, true}, {"!bang", false, true}, {"space ", false, true}, {"trail", false, true}, {"trail ", false, false},
		}},
		{"crlf file", "*.tmp\r\n!a.tmp\r\n", []probe{
			{"b.tmp", false, true}, {"a.tmp", false, false},
		}},
		{"negated dir only", "out/\n!out/\n", []probe{
			{"out", true, false},
		}},
	}
	for _, c := range cases {
		set := newIgnoreSet()
		set.add("", parseGitignore(c.file))
		for _, p := range c.probes {
			if got := set.ignored(p.path, p.isDir); got != p.want {
				t.Errorf("%s: ignored(%q, dir=%v) = %v, want %v", c.name, p.path, p.isDir, got, p.want)
			}
		}
	}
}

func TestIgnoreSetNestedFiles(t *testing.T) {
	set := newIgnoreSet()
	set.add("", parseGitignore("*.gen\nsecret/\n"))
	set.add("pkg", parseGitignore("!keep.gen\n/local.txt\n"))
	set.add("pkg/deep", parseGitignore("*.txt\n"))
	cases := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.gen", false, true},
		{"pkg/a.gen", false, true},
		{"pkg/keep.gen", false, false},  // nested negation wins
		{"other/keep.gen", false, true}, // the negation is local to pkg
		{"pkg/local.txt", false, true},  // anchored to pkg
		{"pkg/sub/local.txt", false, false},
		{"local.txt", false, false},
		{"pkg/deep/x.txt", false, true},
		{"pkg/x.txt", false, false},
		{"pkg/secret", true, true},
	}
	for _, c := range cases {
		if got := set.ignored(c.path, c.isDir); got != c.want {
			t.Errorf("ignored(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

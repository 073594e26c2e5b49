package tools

import "testing"

func TestMatchSegment(t *testing.T) {
	cases := []struct {
		pat, name string
		want      bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "main.go.bak", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"?", "é", true},
		{"[abc].md", "b.md", true},
		{"[abc].md", "d.md", false},
		{"[!abc].md", "d.md", true},
		{"[^abc].md", "a.md", false},
		{"[a-c0-9]x", "7x", true},
		{"[a-c0-9]x", "dx", false},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"[unclosed", "[unclosed", true},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
		{`a\?`, "a?", true},
		{"**", "deep", true},
		{"*x*", "abc", false},
		{"file", "File", false},
	}
	for _, c := range cases {
		if got := matchSegment(c.pat, c.name); got != c.want {
			t.Errorf("matchSegment(%q, %q) = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
}

func TestGlobPatternDoubleStar(t *testing.T) {
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"src/**/*.ts", "src/x.ts", true},
		{"src/**/*.ts", "src/a/b/x.ts", true},
		{"src/**/*.ts", "lib/x.ts", false},
		{"src/**", "src/a", true},
		{"src/**", "src/a/b", true},
		{"src/**", "src", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/**/b", "a/b", true},
		{"*.go", "a/b.go", false},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/x/c", false},
	}
	for _, c := range cases {
		if got := compileGlob(c.pat).match(c.path); got != c.want {
			t.Errorf("glob %q on %q = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}

package frontmatter

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// simple turns a parsed value into plain Go values for comparison: a
// string, nil, a []any or a map[string]any.
func simple(v Value) any {
	switch v.Kind {
	case Scalar:
		return v.Text
	case List:
		out := []any{}
		for _, it := range v.Items {
			out = append(out, simple(it))
		}
		return out
	case Map:
		out := map[string]any{}
		for _, f := range v.Fields {
			out[f.Key] = simple(f.Value)
		}
		return out
	}
	return nil
}

func parseFields(t *testing.T, front string) map[string]any {
	t.Helper()
	doc, err := Parse("SKILL.md", []byte("---\n"+front+"---\nbody\n"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if doc.Body != "body\n" {
		t.Fatalf("body = %q", doc.Body)
	}
	return simple(Value{Kind: Map, Fields: doc.Fields}).(map[string]any)
}

// TestValues: each form of value the subset takes, as YAML 1.2 reads it.
func TestValues(t *testing.T) {
	cases := []struct {
		name, front string
		want        map[string]any
	}{
		{"plain", "name: pdf-tools\ndescription: Extract text from PDFs. Use when: the user has a PDF\n",
			map[string]any{"name": "pdf-tools", "description": "Extract text from PDFs. Use when: the user has a PDF"}},
		{"comments", "# a comment\nname: x # trailing\nurl: http://a#b\n\n",
			map[string]any{"name": "x", "url": "http://a#b"}},
		{"null", "a:\nb: ~\nc: null\nd: ''\n",
			map[string]any{"a": nil, "b": nil, "c": nil, "d": ""}},
		{"scalars stay text", "n: 3\nb: true\nf: 1.5\n",
			map[string]any{"n": "3", "b": "true", "f": "1.5"}},
		{"double quoted", `d: "tab\there \"q\" \u00e9 \x41 \\ #not"` + "\n",
			map[string]any{"d": "tab\there \"q\" é A \\ #not"}},
		{"single quoted", "s: 'it''s: # fine'\n", map[string]any{"s": "it's: # fine"}},
		{"quoted over lines", "d: \"one\n  two\n\n  three\"\n", map[string]any{"d": "one two\nthree"}},
		{"escaped line break", "d: \"one\\\n  two\"\n", map[string]any{"d": "onetwo"}},
		{"plain over lines", "description: first line\n  second line\n\n  after blank\nname: x\n",
			map[string]any{"description": "first line second line\nafter blank", "name": "x"}},
		{"literal", "body: |\n  line 1\n    indented\n\n  line 3\n\nnext: y\n",
			map[string]any{"body": "line 1\n  indented\n\nline 3\n", "next": "y"}},
		{"literal strip", "b: |-\n  a\n  b\n\n", map[string]any{"b": "a\nb"}},
		{"literal keep", "b: |+\n  a\n\n\nc: d\n", map[string]any{"b": "a\n\n\n", "c": "d"}},
		{"literal explicit indent", "b: |2\n    x\n  y\n", map[string]any{"b": "  x\ny\n"}},
		{"literal keeps hash", "b: |\n  # not a comment\n  x\n", map[string]any{"b": "# not a comment\nx\n"}},
		{"folded", "d: >\n  Use this skill\n  when asked.\n\n  Second paragraph.\n    kept\n  end\n",
			map[string]any{"d": "Use this skill when asked.\nSecond paragraph.\n  kept\nend\n"}},
		{"folded strip", "d: >-\n  a\n  b\n", map[string]any{"d": "a b"}},
		{"empty block scalar", "d: |\ne: x\n", map[string]any{"d": "", "e": "x"}},
		{"block list", "tools:\n  - Read\n  - \"Grep\"\n  -   Bash(git:*)\n",
			map[string]any{"tools": []any{"Read", "Grep", "Bash(git:*)"}}},
		{"list at the key's indentation", "tools:\n- a\n- b\nname: x\n",
			map[string]any{"tools": []any{"a", "b"}, "name": "x"}},
		{"flow list", "tools: [Read, \"Write\", 'Edit',]\nempty: []\n",
			map[string]any{"tools": []any{"Read", "Write", "Edit"}, "empty": []any{}}},
		{"flow over lines", "tools: [a,\n  b]\n", map[string]any{"tools": []any{"a", "b"}}},
		{"flow map", "m: {a: 1, \"b\": [x, y], c}\n",
			map[string]any{"m": map[string]any{"a": "1", "b": []any{"x", "y"}, "c": nil}}},
		{"nested map", "metadata:\n  version: 1.0\n  owner:\n    name: me\nlicense: MIT\n",
			map[string]any{"metadata": map[string]any{"version": "1.0", "owner": map[string]any{"name": "me"}}, "license": "MIT"}},
		{"list of maps", "hooks:\n  - matcher: Bash\n    command: ./check.sh\n  - matcher: Edit\n",
			map[string]any{"hooks": []any{map[string]any{"matcher": "Bash", "command": "./check.sh"}, map[string]any{"matcher": "Edit"}}}},
		{"nested list", "l:\n  - - a\n    - b\n  -\n    - c\n", map[string]any{"l": []any{[]any{"a", "b"}, []any{"c"}}}},
		{"quoted key", "\"allowed-tools\": Read\n", map[string]any{"allowed-tools": "Read"}},
		{"unicode", "description: Résumé ✓ 日本\n", map[string]any{"description": "Résumé ✓ 日本"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseFields(t, c.front)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// TestSplit: where the front matter ends and the body begins.
func TestSplit(t *testing.T) {
	doc, err := Parse("a.md", []byte("\ufeff---\r\nname: x\r\n...\r\n# Title\r\ntext\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !doc.HasFront || doc.Body != "# Title\ntext\n" || doc.BodyLine != 4 {
		t.Errorf("doc = %+v", doc)
	}
	doc, err = Parse("a.md", []byte("# No front matter\n---\n"))
	if err != nil || doc.HasFront || doc.Body != "# No front matter\n---\n" || len(doc.Fields) != 0 {
		t.Errorf("no front matter: %+v, %v", doc, err)
	}
	doc, err = Parse("a.md", []byte("---\n---\n"))
	if err != nil || !doc.HasFront || doc.Body != "" || len(doc.Fields) != 0 {
		t.Errorf("empty front matter: %+v, %v", doc, err)
	}
	doc, err = Parse("a.md", []byte("---\nname: x\n---"))
	if err != nil || doc.Body != "" {
		t.Errorf("closing line without a newline: %+v, %v", doc, err)
	}
}

// TestLines: fields carry the line of their key in the file.
func TestLines(t *testing.T) {
	doc, err := Parse("a.md", []byte("---\n# c\nname: x\n\ndescription: >\n  y\ntools:\n  - a\n---\nbody"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"name": 3, "description": 5, "tools": 7}
	for _, f := range doc.Fields {
		if f.Line != want[f.Key] {
			t.Errorf("%s at line %d, want %d", f.Key, f.Line, want[f.Key])
		}
	}
	if v, _ := doc.Get("tools"); v.Items[0].Line != 8 {
		t.Errorf("tools[0] at line %d, want 8", v.Items[0].Line)
	}
	if doc.BodyLine != 10 {
		t.Errorf("body at line %d, want 10", doc.BodyLine)
	}
}

// TestErrors: each error is one line naming the file, the line and the
// field.
func TestErrors(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unclosed", "---\nname: x\n", "SKILL.md:1: front matter opened with --- is never closed"},
		{"no colon", "---\nname x\n---\n", "SKILL.md:2: expected `key: value`, got \"name x\""},
		{"duplicate", "---\nname: a\nname: b\n---\n", "SKILL.md:3: name: duplicate key"},
		{"nested duplicate", "---\nm:\n  a: 1\n  a: 2\n---\n", "SKILL.md:4: m.a: duplicate key"},
		{"indentation", "---\nm:\n    a: 1\n  b: 2\n---\n", "SKILL.md:4: unexpected indentation"},
		{"tab", "---\nm:\n  \tb: c\n---\n", "SKILL.md:3: m: a tab in indentation (YAML indents with spaces)"},
		{"quote unclosed", "---\ndescription: \"abc\nname: x\n---\n", "SKILL.md:2: description: quoted string is never closed"},
		{"after quote", "---\nname: \"a\" b\n---\n", "SKILL.md:2: name: text after the closing quote"},
		{"escape", "---\nd: \"a\\qb\"\n---\n", "SKILL.md:2: d: unknown escape \\q in a double-quoted string"},
		{"anchor", "---\nbase: &x 1\n---\n", "SKILL.md:2: base: anchors, aliases and tags are not supported"},
		{"tag", "---\nn: !!str 1\n---\n", "SKILL.md:2: n: anchors, aliases and tags are not supported"},
		{"bracket", "---\ntools: [a, b\nname: x\n---\n", "SKILL.md:2: tools: bracket is never closed"},
		{"flow junk", "---\ntools: [a] b\n---\n", "SKILL.md:2: tools: text after the closing bracket"},
		{"flow sep", "---\nm: {a: \"1\" b}\n---\n", "SKILL.md:2: m: expected ',' or '}' in a flow collection"},
		{"block header", "---\nd: |x\n---\n", "SKILL.md:2: d: bad block scalar header \"|x\""},
		{"not a mapping", "---\n- a\n- b\n---\n", "SKILL.md:2: front matter must be a mapping of keys to values, not a list"},
		{"list in a mapping", "---\nm:\n  a: 1\n  - b\n---\n", "SKILL.md:4: m: a list item where a key was expected"},
		{"backtick", "---\nd: `x`\n---\n", "SKILL.md:2: d: a plain value may not start with '`': quote it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("SKILL.md", []byte(c.file))
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not an *Error", err)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), c.want)
			}
		})
	}
}

// TestAccessors: String and Strings, and the errors naming a field that
// is not what the caller needs.
func TestAccessors(t *testing.T) {
	doc, err := Parse("p.md", []byte("---\nname: x\ntools: Read, Grep , ,Bash\nlist: [a, b]\nmeta:\n  k: v\nbad: [[a]]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := doc.String("name"); s != "x" || err != nil {
		t.Errorf("name = %q, %v", s, err)
	}
	if s, err := doc.String("absent"); s != "" || err != nil {
		t.Errorf("absent = %q, %v", s, err)
	}
	if _, err := doc.String("list"); err == nil || err.Error() != "p.md:4: list: must be a string, not a list" {
		t.Errorf("String(list) error = %v", err)
	}
	if l, err := doc.Strings("tools"); !reflect.DeepEqual(l, []string{"Read", "Grep", "Bash"}) || err != nil {
		t.Errorf("tools = %q, %v", l, err)
	}
	if l, err := doc.Strings("list"); !reflect.DeepEqual(l, []string{"a", "b"}) || err != nil {
		t.Errorf("list = %q, %v", l, err)
	}
	if _, err := doc.Strings("meta"); err == nil || err.Error() != "p.md:5: meta: must be a list of strings, not a mapping" {
		t.Errorf("Strings(meta) error = %v", err)
	}
	if _, err := doc.Strings("bad"); err == nil || err.Error() != "p.md:7: bad: list items must be strings, not a list" {
		t.Errorf("Strings(bad) error = %v", err)
	}
	if err := doc.Errorf("description", "required"); err.Error() != "p.md:1: description: required" {
		t.Errorf("Errorf = %v", err)
	}
	if m, _ := doc.Get("meta"); m.Raw != "  k: v" {
		t.Errorf("meta raw = %q", m.Raw)
	}
}

// FuzzParse: no input panics, and every error is one line.
func FuzzParse(f *testing.F) {
	f.Add("---\nname: x\ndescription: >\n  y\ntools: [a, {b: c}]\nl:\n  - k: v\n    - x\n---\nbody")
	f.Add("---\nd: \"\\u12\"\ne: '''\n---\n")
	f.Add("---\n- - - a\n  -\n---\n")
	f.Add("---\nb: |+9\n\n\n---\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := Parse("f.md", []byte(s))
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("error on several lines: %q", err.Error())
		}
	})
}

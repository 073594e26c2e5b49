// Package frontmatter reads the YAML front matter of a Markdown file: the
// block between a first line `---` and the next line `---` (or `...`),
// followed by the body.
//
// It parses the subset of YAML that skills (SKILL.md) and agent profiles
// are written in, by zot and by other coding agents: a mapping of keys to
// plain, single-quoted and double-quoted scalars, literal (`|`) and folded
// (`>`) block scalars, block and flow lists, and nested mappings (parsed,
// and kept with their source text). Anchors, aliases, tags and multiple
// documents are refused. Every error is one line naming the file, the
// line and, where there is one, the field.
//
//	doc, err := frontmatter.Parse("skills/pdf/SKILL.md", data)
//	name, err := doc.String("name")
//
// Keys the caller does not ask for are kept in [Doc.Fields] and otherwise
// ignored. Scalars stay text: `true` and `3` are the strings "true" and
// "3"; the caller decides what a field means.
package frontmatter

import (
	"fmt"
	"strings"
)

// Kind is what a [Value] holds.
type Kind int

const (
	// Null is an empty value, `~` or `null`.
	Null Kind = iota
	// Scalar is text: [Value.Text].
	Scalar
	// List is a sequence: [Value.Items].
	List
	// Map is a mapping: [Value.Fields], in the order written.
	Map
)

// String names the kind as an error message does.
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Scalar:
		return "a string"
	case List:
		return "a list"
	case Map:
		return "a mapping"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Value is one parsed YAML value.
type Value struct {
	Kind Kind
	// Text is a scalar's text, with quotes and escapes resolved.
	Text string
	// Items are a list's elements.
	Items []Value
	// Fields are a mapping's entries, in the order written.
	Fields []Field
	// Raw is the value's source text as written (for a block list or
	// mapping, its lines).
	Raw string
	// Line is the 1-based line of the file where the value starts.
	Line int
}

// Field is one key of a mapping and its value.
type Field struct {
	Key   string
	Value Value
	// Line is the 1-based line of the file where the key is.
	Line int
}

// Doc is a Markdown file split into its front matter and its body.
type Doc struct {
	// Path names the file in errors.
	Path string
	// HasFront reports whether the file opened with front matter.
	HasFront bool
	// Fields are the front matter's top-level keys, in the order written.
	Fields []Field
	// Body is the text after the front matter (the whole file when there
	// is none), with CRLF line ends made LF.
	Body string
	// BodyLine is the 1-based line of the file where Body starts.
	BodyLine int
}

// Error is a front matter that does not parse, or a field that is not what
// the caller needs. Its message is one line.
type Error struct {
	Path  string
	Line  int // 0 when the error is about the whole file
	Field string
	Msg   string
}

// Error returns "path:line: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(oneLine(e.Path))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(oneLine(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(oneLine(e.Msg))
	return b.String()
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// Parse splits data into front matter and body and parses the front
// matter. A file that does not start with a `---` line has no front
// matter: its Doc has no fields and the whole file as its body. path only
// names the file in errors.
func Parse(path string, data []byte) (*Doc, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	doc := &Doc{Path: path, Body: text, BodyLine: 1}
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return doc, nil
	}
	doc.HasFront = true
	var front []string
	lineNo := 1
	closed := false
	for rest != "" {
		var ln string
		ln, rest, _ = strings.Cut(rest, "\n")
		lineNo++
		if t := strings.TrimRight(ln, " \t"); t == "---" || t == "..." {
			closed = true
			break
		}
		front = append(front, ln)
	}
	if !closed {
		return nil, &Error{Path: path, Line: 1, Msg: "front matter opened with --- is never closed"}
	}
	doc.Body = rest
	doc.BodyLine = lineNo + 1
	p := &parser{path: path}
	for i, ln := range front {
		p.lines = append(p.lines, newLine(i+2, ln))
	}
	v, err := p.block(0, "")
	if err != nil {
		return nil, err
	}
	switch v.Kind {
	case Null:
	case Map:
		doc.Fields = v.Fields
	default:
		return nil, p.errAt(v.Line, "", "front matter must be a mapping of keys to values, not "+v.Kind.String())
	}
	if p.peek() != nil {
		return nil, p.errAt(p.lines[p.i].n, "", "unexpected indentation")
	}
	return doc, nil
}

// Get returns the value of a top-level key.
func (d *Doc) Get(key string) (Value, bool) {
	for _, f := range d.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return Value{}, false
}

// String returns a top-level key's text: "" when it is absent or null, an
// error naming the field when it is a list or a mapping.
func (d *Doc) String(key string) (string, error) {
	v, ok := d.Get(key)
	if !ok || v.Kind == Null {
		return "", nil
	}
	if v.Kind != Scalar {
		return "", d.Errorf(key, "must be a string, not %s", v.Kind)
	}
	return v.Text, nil
}

// Strings returns a top-level key's list of strings: a list of scalars, or
// one scalar split on commas (the form some agents' files use, as
// `tools: Read, Grep`), each element trimmed and empty ones dropped. An
// absent or null key gives nil.
func (d *Doc) Strings(key string) ([]string, error) {
	v, ok := d.Get(key)
	if !ok || v.Kind == Null {
		return nil, nil
	}
	var out []string
	switch v.Kind {
	case Scalar:
		for _, s := range strings.Split(v.Text, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case List:
		for _, it := range v.Items {
			switch it.Kind {
			case Null:
			case Scalar:
				if s := strings.TrimSpace(it.Text); s != "" {
					out = append(out, s)
				}
			default:
				return nil, &Error{Path: d.Path, Line: it.Line, Field: key, Msg: "list items must be strings, not " + it.Kind.String()}
			}
		}
	default:
		return nil, d.Errorf(key, "must be a list of strings, not %s", v.Kind)
	}
	return out, nil
}

// Errorf returns an [Error] about a top-level key, at its line (or about
// the whole file when the key is absent): for a caller's own checks, as
// "description: required".
func (d *Doc) Errorf(key, format string, args ...any) error {
	line := 0
	for _, f := range d.Fields {
		if f.Key == key {
			line = f.Line
			break
		}
	}
	if line == 0 && d.HasFront {
		line = 1
	}
	return &Error{Path: d.Path, Line: line, Field: key, Msg: fmt.Sprintf(format, args...)}
}

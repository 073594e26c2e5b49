package frontmatter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// line is one line of the front matter.
type line struct {
	n         int    // 1-based line of the file
	indent    int    // leading spaces
	text      string // after the indentation, trailing white space cut
	raw       string // as written
	blank     bool   // empty, white space or a comment only
	tabIndent bool   // a tab right after the leading spaces
}

func newLine(n int, raw string) line {
	i := 0
	for i < len(raw) && raw[i] == ' ' {
		i++
	}
	rest := raw[i:]
	t := strings.TrimRight(rest, " \t")
	l := line{n: n, indent: i, text: t, raw: raw}
	l.blank = t == "" || t[0] == '#'
	l.tabIndent = !l.blank && rest[0] == '\t'
	return l
}

// parser reads the front matter's lines; i is the next one to read.
type parser struct {
	path  string
	lines []line
	i     int
}

func (p *parser) errAt(n int, field, msg string) error {
	return &Error{Path: p.path, Line: n, Field: field, Msg: msg}
}

// peek skips blank lines and returns the next line, nil at the end.
func (p *parser) peek() *line {
	for p.i < len(p.lines) && p.lines[p.i].blank {
		p.i++
	}
	if p.i == len(p.lines) {
		return nil
	}
	return &p.lines[p.i]
}

// rawOf joins the source lines [from, to), without trailing blank lines.
func (p *parser) rawOf(from, to int) string {
	for to > from && strings.TrimSpace(p.lines[to-1].raw) == "" {
		to--
	}
	parts := make([]string, 0, to-from)
	for _, l := range p.lines[from:to] {
		parts = append(parts, l.raw)
	}
	return strings.Join(parts, "\n")
}

func isSeqItem(t string) bool {
	return t == "-" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "-\t")
}

func subField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// block parses a block list or mapping whose lines are indented at least
// min; none gives a null.
func (p *parser) block(min int, field string) (Value, error) {
	l := p.peek()
	if l == nil || l.indent < min {
		return Value{Kind: Null}, nil
	}
	if l.tabIndent {
		return Value{}, p.errAt(l.n, field, "a tab in indentation (YAML indents with spaces)")
	}
	if isSeqItem(l.text) {
		return p.seq(l.indent, field)
	}
	return p.mapping(l.indent, field)
}

// mapping parses the keys at indentation ind.
func (p *parser) mapping(ind int, path string) (Value, error) {
	start := p.i
	v := Value{Kind: Map, Line: p.lines[p.i].n}
	seen := map[string]bool{}
	for {
		l := p.peek()
		if l == nil || l.indent < ind {
			break
		}
		n := l.n
		if l.indent > ind {
			return Value{}, p.errAt(n, path, "unexpected indentation")
		}
		if l.tabIndent {
			return Value{}, p.errAt(n, path, "a tab in indentation (YAML indents with spaces)")
		}
		if isSeqItem(l.text) {
			return Value{}, p.errAt(n, path, "a list item where a key was expected")
		}
		key, rest, err := splitKey(l.text)
		if err != nil {
			return Value{}, p.errAt(n, path, err.Error())
		}
		field := subField(path, key)
		if seen[key] {
			return Value{}, p.errAt(n, field, "duplicate key")
		}
		seen[key] = true
		p.i++
		val, err := p.value(rest, ind, n, field, true)
		if err != nil {
			return Value{}, err
		}
		v.Fields = append(v.Fields, Field{Key: key, Value: val, Line: n})
	}
	v.Raw = p.rawOf(start, p.i)
	return v, nil
}

// seq parses the list items at indentation ind.
func (p *parser) seq(ind int, field string) (Value, error) {
	start := p.i
	v := Value{Kind: List, Line: p.lines[p.i].n}
	for {
		l := p.peek()
		if l == nil || l.indent < ind {
			break
		}
		if l.indent > ind {
			return Value{}, p.errAt(l.n, field, "unexpected indentation")
		}
		if !isSeqItem(l.text) {
			break
		}
		item := fmt.Sprintf("%s[%d]", field, len(v.Items))
		r := l.text[1:]
		k := len(r) - len(strings.TrimLeft(r, " \t"))
		content := r[k:]
		var (
			val Value
			err error
		)
		switch {
		case content == "" || content[0] == '#':
			n := l.n
			p.i++
			val, err = p.value("", ind, n, item, false)
		case isSeqItem(content) || isKeyLine(content):
			// The item is a block list or mapping that starts on the
			// dash's line: read that line as if it began there.
			if strings.ContainsRune(r[:k], '\t') {
				return Value{}, p.errAt(l.n, item, "a tab in indentation (YAML indents with spaces)")
			}
			l.indent = ind + 1 + k
			l.text = content
			val, err = p.block(ind+1, item)
		default:
			n := l.n
			p.i++
			val, err = p.value(content, ind, n, item, false)
		}
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, val)
	}
	v.Raw = p.rawOf(start, p.i)
	return v, nil
}

// isKeyLine reports whether t reads as `key: value`.
func isKeyLine(t string) bool {
	_, _, err := splitKey(t)
	return err == nil
}

// splitKey splits `key: rest`.
func splitKey(t string) (key, rest string, err error) {
	if t[0] == '"' || t[0] == '\'' {
		k, end, err := scanQuoted(t)
		if err != nil {
			return "", "", err
		}
		if end < 0 {
			return "", "", errors.New("a quoted key must close on its line")
		}
		after := strings.TrimLeft(t[end:], " \t")
		if !strings.HasPrefix(after, ":") || (len(after) > 1 && after[1] != ' ' && after[1] != '\t') {
			return "", "", errors.New("expected ':' after the key")
		}
		return k, strings.TrimLeft(after[1:], " \t"), nil
	}
	switch t[0] {
	case '?', '&', '*', '!', '[', '{', '|', '>', '%', '@', '`', ':':
		return "", "", fmt.Errorf("a key may not start with %q (this YAML subset has plain keys)", t[0])
	}
	for i := 0; i < len(t); i++ {
		if t[i] == ':' && (i+1 == len(t) || t[i+1] == ' ' || t[i+1] == '\t') {
			key = strings.TrimRight(t[:i], " \t")
			if strings.Contains(key, " #") {
				break
			}
			return key, strings.TrimLeft(t[i+1:], " \t"), nil
		}
		if t[i] == '#' && i > 0 && (t[i-1] == ' ' || t[i-1] == '\t') {
			break
		}
	}
	return "", "", fmt.Errorf("expected `key: value`, got %s", strconv.Quote(clip(t)))
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	i := 40
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// value parses the value after a key or a dash (rest, with the
// continuation lines after it) of a node at indentation ind, on line n.
// In a mapping a list may sit at the key's own indentation.
func (p *parser) value(rest string, ind, n int, field string, inMap bool) (Value, error) {
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" || rest[0] == '#' {
		l := p.peek()
		if l == nil {
			return Value{Kind: Null, Line: n}, nil
		}
		if l.indent > ind {
			return p.block(ind+1, field)
		}
		if inMap && l.indent == ind && isSeqItem(l.text) {
			return p.seq(ind, field)
		}
		return Value{Kind: Null, Line: n}, nil
	}
	start := p.i
	var (
		v   Value
		err error
	)
	switch rest[0] {
	case '|', '>':
		v, err = p.blockScalar(rest, ind, n, field)
	case '"', '\'':
		v, err = p.quoted(rest, ind, n, field)
	case '[', '{':
		v, err = p.flow(rest, ind, n, field)
	case '&', '*', '!':
		return Value{}, p.errAt(n, field, "anchors, aliases and tags are not supported")
	case '@', '`':
		return Value{}, p.errAt(n, field, fmt.Sprintf("a plain value may not start with %q: quote it", rest[0]))
	default:
		v = p.plain(rest, ind)
	}
	if err != nil {
		return Value{}, err
	}
	v.Line = n
	if p.i > start {
		v.Raw = rest + "\n" + p.rawOf(start, p.i)
	} else {
		v.Raw = rest
	}
	return v, nil
}

// plain reads a plain scalar and the more-indented lines that continue it.
func (p *parser) plain(rest string, ind int) Value {
	text := cutComment(rest)
	j := p.i
	empties := 0
	multi := false
	for j < len(p.lines) {
		l := p.lines[j]
		if strings.TrimSpace(l.raw) == "" {
			empties++
			j++
			continue
		}
		if l.blank || l.tabIndent || l.indent <= ind {
			break
		}
		if empties > 0 {
			text += strings.Repeat("\n", empties)
		} else {
			text += " "
		}
		text += cutComment(l.text)
		empties = 0
		j++
		p.i = j
		multi = true
	}
	if !multi {
		switch text {
		case "", "~", "null", "Null", "NULL":
			return Value{Kind: Null}
		}
	}
	return Value{Kind: Scalar, Text: text}
}

// cutComment drops a ` #` comment and the white space around the text.
func cutComment(s string) string {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			s = s[:i]
			break
		}
	}
	return strings.TrimSpace(s)
}

// quoted reads a quoted scalar, which may go on over the next lines.
func (p *parser) quoted(rest string, ind, n int, field string) (Value, error) {
	text := rest
	for {
		s, end, err := scanQuoted(text)
		if err != nil {
			return Value{}, p.errAt(n, field, err.Error())
		}
		if end >= 0 {
			if after := strings.TrimSpace(text[end:]); after != "" && after[0] != '#' {
				return Value{}, p.errAt(n, field, "text after the closing quote")
			}
			return Value{Kind: Scalar, Text: s}, nil
		}
		if p.i == len(p.lines) {
			return Value{}, p.errAt(n, field, "quoted string is never closed")
		}
		l := p.lines[p.i]
		if strings.TrimSpace(l.raw) != "" && l.indent <= ind {
			return Value{}, p.errAt(n, field, "quoted string is never closed")
		}
		text += "\n" + strings.TrimSpace(l.raw)
		p.i++
	}
}

// scanQuoted reads the quoted string s starts with: its value and the
// index after its closing quote, or end -1 when s ends first. Line breaks
// in s fold as YAML folds them: one becomes a space, each further one a
// newline.
func scanQuoted(s string) (val string, end int, err error) {
	q := s[0]
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i += 2
		case c == q:
			return b.String(), i + 1, nil
		case c == '\n':
			k := 0
			for i < len(s) && s[i] == '\n' {
				k++
				i++
			}
			if k == 1 {
				b.WriteByte(' ')
			} else {
				b.WriteString(strings.Repeat("\n", k-1))
			}
		case c == '\\' && q == '"':
			if i+1 == len(s) {
				return "", -1, nil
			}
			adv, err := unescape(&b, s[i+1:])
			if err != nil {
				return "", 0, err
			}
			i += 1 + adv
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", -1, nil
}

// unescape writes the escape s starts with (after its backslash) and
// returns how many bytes of s it took.
func unescape(b *strings.Builder, s string) (int, error) {
	c := s[0]
	width := 0
	switch c {
	case '0':
		b.WriteByte(0)
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 't', '\t':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'v':
		b.WriteByte('\v')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case 'e':
		b.WriteByte(0x1b)
	case ' ', '"', '/', '\\':
		b.WriteByte(c)
	case 'N':
		b.WriteRune('\u0085')
	case '_':
		b.WriteRune('\u00a0')
	case 'L':
		b.WriteRune('\u2028')
	case 'P':
		b.WriteRune('\u2029')
	case '\n': // an escaped line break joins the lines
	case 'x':
		width = 2
	case 'u':
		width = 4
	case 'U':
		width = 8
	default:
		return 0, fmt.Errorf("unknown escape \\%c in a double-quoted string", c)
	}
	if width == 0 {
		return 1, nil
	}
	if len(s) < 1+width {
		return 0, fmt.Errorf("short escape \\%c in a double-quoted string", c)
	}
	r, err := strconv.ParseUint(s[1:1+width], 16, 32)
	if err != nil || r > utf8.MaxRune {
		return 0, fmt.Errorf("bad escape \\%s in a double-quoted string", s[:1+width])
	}
	b.WriteRune(rune(r))
	return 1 + width, nil
}

// blockScalar reads a literal (|) or folded (>) block scalar.
func (p *parser) blockScalar(header string, ind, n int, field string) (Value, error) {
	style := header[0]
	chomp := byte(0)
	explicit := 0
	h := header[1:]
	for len(h) > 0 && h[0] != ' ' && h[0] != '\t' {
		switch c := h[0]; {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return Value{}, p.errAt(n, field, fmt.Sprintf("bad block scalar header %s", strconv.Quote(header)))
		}
		h = h[1:]
	}
	if t := strings.TrimSpace(h); t != "" && t[0] != '#' {
		return Value{}, p.errAt(n, field, "text after a block scalar's indicator")
	}
	content := -1
	if explicit > 0 {
		content = ind + explicit
	}
	var lines []string
	j := p.i
	for ; j < len(p.lines); j++ {
		raw := p.lines[j].raw
		if strings.TrimSpace(raw) == "" {
			lines = append(lines, "")
			continue
		}
		sp := len(raw) - len(strings.TrimLeft(raw, " "))
		if content < 0 {
			if sp <= ind {
				break
			}
			content = sp
		}
		if sp < content {
			break
		}
		lines = append(lines, strings.TrimRight(raw[content:], "\r"))
	}
	// Blank lines after the last content line belong to what follows
	// unless kept.
	trailing := 0
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
		trailing++
	}
	p.i = j - trailing
	if chomp == '+' {
		p.i = j
	}
	var text string
	if style == '|' {
		text = strings.Join(lines, "\n")
	} else {
		text = fold(lines)
	}
	switch {
	case len(lines) == 0 && chomp != '+':
		text = ""
	case chomp == '-':
	case chomp == '+':
		text += "\n" + strings.Repeat("\n", trailing)
	default:
		text += "\n"
	}
	return Value{Kind: Scalar, Text: text}, nil
}

// fold joins the lines of a folded block scalar: a break between two
// lines of text becomes a space, a run of empty lines keeps one newline
// each, and more-indented lines keep their breaks.
func fold(lines []string) string {
	more := func(s string) bool { return s != "" && (s[0] == ' ' || s[0] == '\t') }
	var b strings.Builder
	lastText := ""
	for i, ln := range lines {
		switch {
		case i == 0:
		case ln == "":
			b.WriteByte('\n')
		case lines[i-1] == "":
			if more(lastText) || more(ln) {
				b.WriteByte('\n')
			}
		case more(lines[i-1]) || more(ln):
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
		b.WriteString(ln)
		if ln != "" {
			lastText = ln
		}
	}
	return b.String()
}

// errUnclosed says a flow collection goes on past the text read so far.
var errUnclosed = errors.New("unclosed")

// flow reads a flow list or mapping, which may go on over the next lines.
func (p *parser) flow(rest string, ind, n int, field string) (Value, error) {
	text := rest
	for {
		f := flowParser{s: text}
		v, err := f.value(field)
		if err == nil {
			f.space()
			if f.i < len(f.s) && f.s[f.i] != '#' {
				return Value{}, p.errAt(n, field, "text after the closing bracket")
			}
			setLine(&v, n)
			return v, nil
		}
		if !errors.Is(err, errUnclosed) {
			var fe *Error
			if errors.As(err, &fe) {
				fe.Path, fe.Line = p.path, n
				return Value{}, fe
			}
			return Value{}, p.errAt(n, field, err.Error())
		}
		if p.i == len(p.lines) {
			return Value{}, p.errAt(n, field, "bracket is never closed")
		}
		l := p.lines[p.i]
		if strings.TrimSpace(l.raw) != "" && l.indent <= ind {
			return Value{}, p.errAt(n, field, "bracket is never closed")
		}
		if !l.blank {
			text += " " + l.text
		}
		p.i++
	}
}

// setLine gives a flow collection's values the line it starts on.
func setLine(v *Value, n int) {
	v.Line = n
	for i := range v.Items {
		setLine(&v.Items[i], n)
	}
	for i := range v.Fields {
		v.Fields[i].Line = n
		setLine(&v.Fields[i].Value, n)
	}
}

// maxFlowDepth bounds how deep flow collections nest: a field's name
// grows with each level, so a file of brackets alone would otherwise
// take memory as the square of its length.
const maxFlowDepth = 32

// flowParser reads a flow collection from one string.
type flowParser struct {
	s     string
	i     int
	depth int
}

func (f *flowParser) space() {
	for f.i < len(f.s) && (f.s[f.i] == ' ' || f.s[f.i] == '\t') {
		f.i++
	}
}

func (f *flowParser) value(field string) (Value, error) {
	f.space()
	if f.i == len(f.s) {
		return Value{}, errUnclosed
	}
	switch c := f.s[f.i]; c {
	case '[', '{':
		if f.depth++; f.depth > maxFlowDepth {
			return Value{}, &Error{Field: field, Msg: fmt.Sprintf("nested deeper than %d levels", maxFlowDepth)}
		}
		defer func() { f.depth-- }()
	}
	switch c := f.s[f.i]; c {
	case '[':
		f.i++
		v := Value{Kind: List}
		for {
			f.space()
			if f.i == len(f.s) {
				return Value{}, errUnclosed
			}
			if f.s[f.i] == ']' {
				f.i++
				return v, nil
			}
			it, err := f.value(fmt.Sprintf("%s[%d]", field, len(v.Items)))
			if err != nil {
				return Value{}, err
			}
			v.Items = append(v.Items, it)
			if err := f.sep(']'); err != nil {
				return Value{}, err
			}
		}
	case '{':
		f.i++
		v := Value{Kind: Map}
		seen := map[string]bool{}
		for {
			f.space()
			if f.i == len(f.s) {
				return Value{}, errUnclosed
			}
			if f.s[f.i] == '}' {
				f.i++
				return v, nil
			}
			k, err := f.scalar(true)
			if err != nil {
				return Value{}, err
			}
			if k.Kind != Scalar {
				return Value{}, errors.New("a flow mapping's key must be a string")
			}
			key := subField(field, k.Text)
			if seen[k.Text] {
				return Value{}, &Error{Field: key, Msg: "duplicate key"}
			}
			seen[k.Text] = true
			f.space()
			val := Value{Kind: Null}
			if f.i < len(f.s) && f.s[f.i] == ':' {
				f.i++
				f.space()
				if f.i < len(f.s) && f.s[f.i] != ',' && f.s[f.i] != '}' {
					if val, err = f.value(key); err != nil {
						return Value{}, err
					}
				}
			}
			v.Fields = append(v.Fields, Field{Key: k.Text, Value: val})
			if err := f.sep('}'); err != nil {
				return Value{}, err
			}
		}
	case '&', '*', '!':
		return Value{}, errors.New("anchors, aliases and tags are not supported")
	}
	return f.scalar(false)
}

// sep reads the comma or the closing bracket after an element.
func (f *flowParser) sep(closer byte) error {
	f.space()
	if f.i == len(f.s) {
		return errUnclosed
	}
	switch f.s[f.i] {
	case ',':
		f.i++
		return nil
	case closer:
		return nil
	}
	return fmt.Errorf("expected ',' or '%c' in a flow collection", closer)
}

// scalar reads a quoted or plain scalar of a flow collection; a key ends
// at its colon.
func (f *flowParser) scalar(key bool) (Value, error) {
	if c := f.s[f.i]; c == '"' || c == '\'' {
		s, end, err := scanQuoted(f.s[f.i:])
		if err != nil {
			return Value{}, err
		}
		if end < 0 {
			return Value{}, errUnclosed
		}
		f.i += end
		return Value{Kind: Scalar, Text: s}, nil
	}
	start := f.i
	for f.i < len(f.s) {
		c := f.s[f.i]
		if c == ',' || c == ']' || c == '}' || c == '[' || c == '{' {
			break
		}
		if c == ':' && (key || f.i+1 == len(f.s) || f.s[f.i+1] == ' ') {
			break
		}
		if c == '#' && f.i > start && (f.s[f.i-1] == ' ' || f.s[f.i-1] == '\t') {
			return Value{}, errors.New("a comment inside a flow collection")
		}
		f.i++
	}
	t := strings.TrimSpace(f.s[start:f.i])
	switch t {
	case "", "~", "null", "Null", "NULL":
		if !key {
			return Value{Kind: Null}, nil
		}
	}
	return Value{Kind: Scalar, Text: t}, nil
}

package gen

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyWidth is the column the generated Python wraps comments and docstrings at.
const pyWidth = 79

// Python returns the Python module clients/python/zot_client/types.py for
// the model: standard-library dataclasses for objects, Literal aliases for
// enums, parse functions for unions and the table of command results. The
// module runs on Python 3.9 and later.
func Python(m *Model) ([]byte, error) {
	n, err := pyPlan(m)
	if err != nil {
		return nil, err
	}
	w := &pyWriter{m: m, n: n}
	w.header()
	w.aliases()
	if err := w.helpers(); err != nil {
		return nil, err
	}
	for _, d := range m.sorted() {
		if d.Kind == KindObject {
			w.object(d)
		}
	}
	for _, u := range m.sorted() {
		if u.Kind == KindUnion {
			w.union(u)
		}
	}
	w.results()
	return w.buf.Bytes(), nil
}

// pyNames holds every name the Python module defines, decided before any
// code is written so that clashes are reported instead of shadowing.
type pyNames struct {
	// fields maps an object's definition name to its Python attribute
	// names, one per field, in field order.
	fields map[string][]string
	// results lists the commands with a result type, in schema order.
	results []pyResult
	// all is every public module-level name, sorted.
	all []string
}

// pyResult ties a command's `type` to the definition of its result data.
type pyResult struct {
	command string
	result  string
}

// pyKeywords are Python's hard keywords, which cannot name anything.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true,
	"assert": true, "async": true, "await": true, "break": true,
	"class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true,
	"global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true,
	"raise": true, "return": true, "try": true, "while": true, "with": true,
	"yield": true,
}

// pyModuleNames are the names the module imports or relies on; a
// definition may not take them.
var pyModuleNames = map[string]bool{
	"Any": true, "Callable": true, "ClassVar": true, "Dict": true,
	"List": true, "Literal": true, "Mapping": true, "Optional": true,
	"Tuple": true, "Union": true, "annotations": true, "collections": true,
	"dataclasses": true, "bool": true, "dict": true, "float": true,
	"frozenset": true, "getattr": true, "int": true, "isinstance": true,
	"list": true, "str": true, "type": true, "ValueError": true,
	"RESULT_TYPES": true, "parse_result": true,
}

// pyMemberNames are attribute names a dataclass field may not use, because
// the generated class defines them or its annotations refer to them; a
// field with such a JSON name gets a trailing underscore.
var pyMemberNames = map[string]bool{
	"extra": true, "TYPE": true, "_KEYS": true, "from_dict": true,
	"to_dict": true, "Any": true, "ClassVar": true, "Dict": true,
	"List": true, "Literal": true, "Optional": true, "Union": true,
	"bool": true, "float": true, "int": true, "str": true,
	"dataclasses": true,
}

// pyPlan names everything the module will define and reports clashes.
func pyPlan(m *Model) (*pyNames, error) {
	n := &pyNames{fields: map[string][]string{}}
	taken := map[string]string{}
	claim := func(name, what string) error {
		if prev, dup := taken[name]; dup {
			return fmt.Errorf("python: %s and %s would both be named %s", prev, what, name)
		}
		taken[name] = what
		n.all = append(n.all, name)
		return nil
	}
	for _, d := range m.sorted() {
		if !pyIsIdent(d.Name) || pyKeywords[d.Name] || pyModuleNames[d.Name] || strings.HasPrefix(d.Name, "_") {
			return nil, fmt.Errorf("python: definition name %q cannot be a Python class or alias name", d.Name)
		}
		if err := claim(d.Name, "definition "+d.Name); err != nil {
			return nil, err
		}
		switch d.Kind {
		case KindEnum:
			if err := claim(pyConstName(d.Name, true), "the values of "+d.Name); err != nil {
				return nil, err
			}
		case KindUnion:
			for _, v := range d.Variants {
				if v.Kind != KindObject || v.TypeConst == "" {
					return nil, fmt.Errorf("python: %s: variant %s is not an object with a `type` const", d.Name, v.Name)
				}
			}
			for _, extra := range []struct{ name, what string }{
				{"Unknown" + d.Name, "the unknown variant of " + d.Name},
				{"parse_" + pySnake(d.Name), "the parse function of " + d.Name},
				{pyConstName(d.Name, false) + "_VARIANTS", "the variant table of " + d.Name},
			} {
				if err := claim(extra.name, extra.what); err != nil {
					return nil, err
				}
			}
		case KindObject:
			seen := map[string]string{}
			for _, f := range d.Fields {
				name := pyFieldName(f.JSONName, m)
				if prev, dup := seen[name]; dup {
					return nil, fmt.Errorf("python: %s: properties %q and %q would both be named %s", d.Name, prev, f.JSONName, name)
				}
				seen[name] = f.JSONName
				n.fields[d.Name] = append(n.fields[d.Name], name)
			}
		}
	}
	for _, name := range []string{"RESULT_TYPES", "parse_result"} {
		if err := claim(name, name); err != nil {
			return nil, err
		}
	}
	commands := map[string]string{}
	for _, d := range m.sorted() {
		if d.Result == "" {
			continue
		}
		if d.TypeConst == "" {
			return nil, fmt.Errorf("python: %s has x-result but no `type` const", d.Name)
		}
		if prev, dup := commands[d.TypeConst]; dup {
			return nil, fmt.Errorf("python: %s and %s both have x-result for type %q", prev, d.Name, d.TypeConst)
		}
		commands[d.TypeConst] = d.Name
		n.results = append(n.results, pyResult{command: d.TypeConst, result: d.Result})
	}
	sort.Strings(n.all)
	return n, nil
}

// pyWriter accumulates the module text.
type pyWriter struct {
	m   *Model
	n   *pyNames
	buf bytes.Buffer
}

func (w *pyWriter) p(format string, args ...any) {
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// call writes open, the comma-separated args and close on one line when it
// fits, else with args on their own line, or one per line if that is still
// too long.
func (w *pyWriter) call(open string, args []string, close string) {
	joined := strings.Join(args, ", ")
	if len(open)+len(joined)+len(close) <= pyWidth {
		w.p("%s%s%s", open, joined, close)
		return
	}
	indent := strings.Repeat(" ", len(open)-len(strings.TrimLeft(open, " ")))
	w.p("%s", open)
	if len(indent)+4+len(joined) <= pyWidth {
		w.p("%s    %s", indent, joined)
	} else {
		for _, a := range args {
			w.p("%s    %s,", indent, a)
		}
	}
	w.p("%s%s", indent, strings.TrimLeft(close, " "))
}

// docstring writes a docstring: text filled at the indent, then any
// further lines as given (indented again), then the closing quotes.
func (w *pyWriter) docstring(indent, text string, more ...string) {
	if one := indent + `"""` + text + `"""`; len(more) == 0 && !strings.Contains(text, "\n") && utf8.RuneCountInString(one) <= pyWidth {
		w.p("%s", one)
		return
	}
	for _, line := range pyFill(text, indent+`"""`, indent, pyWidth) {
		w.p("%s", line)
	}
	for _, line := range more {
		w.p("%s%s", indent, line)
	}
	w.p(`%s"""`, indent)
}

// comment writes text as # comment lines with the given indent.
func (w *pyWriter) comment(indent, text string) {
	for _, line := range pyFill(text, indent+"# ", indent+"# ", pyWidth) {
		w.p("%s", line)
	}
}

func (w *pyWriter) header() {
	for _, line := range w.m.generatedBy("#") {
		w.p("%s", line)
	}
	w.p("")
	w.p(`"""Types of %s, generated from its JSON Schema.`, w.m.title())
	w.p("")
	w.p("Every object is a dataclass. ``from_dict`` builds one from decoded JSON and")
	w.p("is tolerant: members the schema does not define are kept in ``extra``.")
	w.p("``to_dict`` turns it back into JSON-ready values, leaving out absent")
	w.p("optional fields. Unions are read with their ``parse_*`` function, which")
	w.p("returns an ``Unknown*`` value for a ``type`` this module does not know, so")
	w.p("that newer servers never break older clients.")
	w.p(`"""`)
	w.p("")
	w.p("from __future__ import annotations")
	w.p("")
	w.p("import collections.abc")
	w.p("import dataclasses")
	w.p("from typing import (")
	for _, name := range []string{"Any", "Callable", "ClassVar", "Dict", "List", "Literal", "Mapping", "Optional", "Tuple", "Union"} {
		w.p("    %s,", name)
	}
	w.p(")")
	w.p("")
	w.p("__all__ = [")
	for _, name := range w.n.all {
		w.p("    %s,", pyStr(name))
	}
	w.p("]")
}

// aliases writes the enums, scalars and custom types, which the classes
// below refer to.
func (w *pyWriter) aliases() {
	for _, d := range w.m.sorted() {
		switch d.Kind {
		case KindEnum:
			w.p("")
			w.p("")
			w.comment("", d.Description)
			w.p("%s = Literal[", d.Name)
			for _, v := range d.Enum {
				if doc := d.EnumDocs[v]; doc != "" {
					w.comment("    ", doc)
				}
				w.p("    %s,", pyStr(v))
			}
			w.p("]")
			w.p("")
			w.comment("", fmt.Sprintf("Every %s value, in schema order.", d.Name))
			w.p("%s: Tuple[%s, ...] = (", pyConstName(d.Name, true), d.Name)
			for _, v := range d.Enum {
				w.p("    %s,", pyStr(v))
			}
			w.p(")")
		case KindScalar:
			w.p("")
			w.p("")
			w.comment("", d.Description)
			w.p("%s = %s", d.Name, pyJSONType(d.Scalar))
		case KindCustom:
			w.p("")
			w.p("")
			w.comment("", d.Description)
			w.p("%s = %s", d.Name, pyCustomType(d.JSONTypes))
		}
	}
}

// pyHelpersFile holds the private functions the generated classes share,
// as a Python file of its own; the part after pyHelpersMarker is copied
// into every generated module.
//
//go:embed python/helpers.py
var pyHelpersFile string

// pyHelpersMarker ends the preamble of python/helpers.py.
const pyHelpersMarker = "# ---- zot-gen copies from here ----\n"

// pyHelpers returns the part of python/helpers.py that generated modules
// hold, without its surrounding blank lines.
func pyHelpers() (string, error) {
	_, body, ok := strings.Cut(pyHelpersFile, pyHelpersMarker)
	if !ok {
		return "", fmt.Errorf("python/helpers.py has no line %q", strings.TrimSpace(pyHelpersMarker))
	}
	return strings.Trim(body, "\n"), nil
}

func (w *pyWriter) helpers() error {
	body, err := pyHelpers()
	if err != nil {
		return err
	}
	w.p("")
	w.p("")
	w.p("%s", body)
	return nil
}

// object writes the dataclass of an object definition.
func (w *pyWriter) object(d *Def) {
	names := w.n.fields[d.Name]
	var order []int // required fields first, then optional, each in schema order
	for pass := 0; pass < 2; pass++ {
		for i, f := range d.Fields {
			if f.Required == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	w.p("")
	w.p("")
	w.p("@dataclasses.dataclass")
	w.p("class %s:", d.Name)
	doc := pyFill(pyDocEscape(d.Description), `    """`, "    ", pyWidth)
	doc = append(doc, "", "    Attributes:")
	for _, i := range order {
		f := d.Fields[i]
		text := f.Description
		if !f.Required {
			text += " Optional; None when absent."
		}
		doc = append(doc, pyFill(pyDocEscape(text), "        "+names[i]+": ", "            ", pyWidth)...)
	}
	doc = append(doc, pyFill("Members the schema does not define, kept as read and written back by to_dict.", "        extra: ", "            ", pyWidth)...)
	for _, line := range doc {
		w.p("%s", line)
	}
	w.p(`    """`)
	w.p("")
	keys := []string{}
	if d.TypeConst != "" {
		w.p("    TYPE: ClassVar[str] = %s", pyStr(d.TypeConst))
		keys = append(keys, pyStr("type"))
	}
	for _, f := range d.Fields {
		keys = append(keys, pyStr(f.JSONName))
	}
	if len(keys) == 0 {
		w.p("    _KEYS: ClassVar[frozenset] = frozenset()")
	} else {
		w.call("    _KEYS: ClassVar[frozenset] = frozenset({", keys, "})")
	}
	w.p("")
	for _, i := range order {
		f := d.Fields[i]
		if f.Required {
			w.p("    %s: %s", names[i], pyAnnotation(f.Type))
		} else {
			w.p("    %s: %s = None", names[i], pyOptional(f.Type))
		}
	}
	w.p("    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)")
	w.p("")
	w.p("    @classmethod")
	w.p("    def from_dict(cls, d: Mapping[str, Any]) -> %s:", d.Name)
	if d.TypeConst != "" {
		w.docstring("        ", fmt.Sprintf("Builds %s %s from a decoded JSON object.\n\nRaises ValueError when d is not an object, its ``type`` is not %s, or a required field is missing.", pyArticle(d.Name), d.Name, pyStr(d.TypeConst)))
	} else {
		w.docstring("        ", fmt.Sprintf("Builds %s %s from a decoded JSON object.\n\nRaises ValueError when d is not an object or a required field is missing.", pyArticle(d.Name), d.Name))
	}
	w.p("        _check_object(d, %s)", pyStr(d.Name))
	if d.TypeConst != "" {
		w.p("        _check_type(d, cls.TYPE, %s)", pyStr(d.Name))
	}
	w.p("        return cls(")
	for i, f := range d.Fields {
		args := []string{"d", pyStr(f.JSONName), pyStr(d.Name), pyBool(f.Required)}
		if conv := pyConv(f.Type); conv != "" {
			args = append(args, conv)
		}
		w.call("            "+names[i]+"=_field(", args, "),")
	}
	w.p("            extra=_extra(d, cls._KEYS),")
	w.p("        )")
	w.p("")
	w.p("    def to_dict(self) -> Dict[str, Any]:")
	w.p(`        """Returns the JSON object, leaving out absent optional fields."""`)
	if d.TypeConst != "" {
		w.p(`        d: Dict[str, Any] = {"type": self.TYPE}`)
	} else {
		w.p("        d: Dict[str, Any] = {}")
	}
	for i, f := range d.Fields {
		val := "self." + names[i]
		if pyNeedsDump(f.Type) {
			val = "_to_json(" + val + ")"
		}
		if f.Required {
			w.p("        d[%s] = %s", pyStr(f.JSONName), val)
		} else {
			w.p("        if self.%s is not None:", names[i])
			w.p("            d[%s] = %s", pyStr(f.JSONName), val)
		}
	}
	w.p("        return _merge_extra(d, self.extra)")
}

// union writes a union's unknown variant, its alias, its variant table and
// its parse function.
func (w *pyWriter) union(u *Def) {
	unknown := "Unknown" + u.Name
	table := pyConstName(u.Name, false) + "_VARIANTS"
	w.p("")
	w.p("")
	w.p("@dataclasses.dataclass")
	w.p("class %s:", unknown)
	w.docstring("    ", fmt.Sprintf("%s %s whose ``type`` this module does not know, kept as read.\n\nAttributes:", strings.ToUpper(pyArticle(u.Name)[:1])+pyArticle(u.Name)[1:], u.Name), "    type: The ``type`` member.", "    raw: The whole JSON object, ``type`` included.")
	w.p("")
	w.p("    type: str")
	w.p("    raw: Dict[str, Any]")
	w.p("")
	w.p("    def to_dict(self) -> Dict[str, Any]:")
	w.p(`        """Returns the JSON object as it was read."""`)
	w.p("        return dict(self.raw)")
	w.p("")
	w.p("")
	w.comment("", u.Description)
	w.p("%s = Union[", u.Name)
	for _, v := range u.Variants {
		w.p("    %s,", v.Name)
	}
	w.p("    %s,", unknown)
	w.p("]")
	w.p("")
	w.comment("", fmt.Sprintf("The %s classes by their `type`.", u.Name))
	w.p("%s: Dict[str, Any] = {", table)
	for _, v := range u.Variants {
		w.p("    %s: %s,", pyStr(v.TypeConst), v.Name)
	}
	w.p("}")
	w.p("")
	w.p("")
	w.p("def parse_%s(d: Mapping[str, Any]) -> %s:", pySnake(u.Name), u.Name)
	w.docstring("    ", fmt.Sprintf(`Builds the %s variant that d["type"] names.`+"\n\n"+"Returns %s %s for a ``type`` this module does not know. Raises ValueError when d is not an object, has no string ``type``, or lacks a required field of its variant.", u.Name, pyArticle(unknown), unknown))
	w.call("    return _parse_union(", []string{"d", pyStr(u.Name), table, unknown}, ")")
}

// results writes RESULT_TYPES and parse_result.
func (w *pyWriter) results() {
	w.p("")
	w.p("")
	w.comment("", "The class of a successful response's `data`, by the command's `type`. Commands not listed return no data.")
	w.p("RESULT_TYPES: Dict[str, Any] = {")
	for _, r := range w.n.results {
		w.p("    %s: %s,", pyStr(r.command), r.result)
	}
	w.p("}")
	w.p("")
	w.p("")
	w.p("def parse_result(command: str, data: Optional[Mapping[str, Any]]) -> Any:")
	w.p(`    """Builds the typed result of a successful response to a command.`)
	w.p("")
	w.p("    command is the response's ``command`` and data its ``data``. Returns data")
	w.p("    unchanged when it is None or the command has no result type here (for")
	w.p("    example a command newer than this module).")
	w.p(`    """`)
	w.p("    cls = RESULT_TYPES.get(command)")
	w.p("    if cls is None or data is None:")
	w.p("        return data")
	w.p("    return cls.from_dict(data)")
}

// pyAnnotation returns the Python annotation of a required field's type.
func pyAnnotation(t *Type) string {
	switch t.Kind {
	case TString:
		if len(t.Enum) > 0 {
			vals := make([]string, len(t.Enum))
			for i, v := range t.Enum {
				vals[i] = pyStr(v)
			}
			return "Literal[" + strings.Join(vals, ", ") + "]"
		}
		return "str"
	case TInteger:
		return "int"
	case TNumber:
		return "float"
	case TBoolean:
		return "bool"
	case TAny:
		return "Any"
	case TObject:
		return "Dict[str, Any]"
	case TRef:
		return t.Ref.Name
	case TArray:
		return "List[" + pyAnnotation(t.Items) + "]"
	}
	return "Any"
}

// pyOptional returns the annotation of an optional field's type.
func pyOptional(t *Type) string {
	if t.Kind == TAny {
		return "Any"
	}
	return "Optional[" + pyAnnotation(t) + "]"
}

// pyConv returns the Python callable that turns a field's decoded JSON into
// its class, or "" when the value is kept as decoded.
func pyConv(t *Type) string {
	switch t.Kind {
	case TRef:
		switch t.Ref.Kind {
		case KindObject:
			return t.Ref.Name + ".from_dict"
		case KindUnion:
			return "parse_" + pySnake(t.Ref.Name)
		}
	case TArray:
		inner := pyConv(t.Items)
		if inner == "" {
			inner = "None"
		}
		return "_list_of(" + inner + ")"
	}
	return ""
}

// pyNeedsDump reports whether a field's value holds dataclasses that
// to_dict must turn back into JSON values.
func pyNeedsDump(t *Type) bool {
	switch t.Kind {
	case TRef:
		return t.Ref.Kind == KindObject || t.Ref.Kind == KindUnion
	case TArray:
		return pyNeedsDump(t.Items)
	}
	return false
}

// pyJSONType returns the Python type of a JSON Schema scalar type name.
func pyJSONType(s string) string {
	switch s {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "object":
		return "Dict[str, Any]"
	case "array":
		return "List[Any]"
	}
	return "Any"
}

// pyCustomType returns the alias of a custom definition from the JSON types
// it accepts. A JSON number may decode as int or float; null is left out,
// since None already stands for an absent value.
func pyCustomType(jsonTypes []string) string {
	var parts []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	for _, t := range jsonTypes {
		switch t {
		case "null":
		case "number":
			add("int")
			add("float")
		default:
			add(pyJSONType(t))
		}
	}
	switch len(parts) {
	case 0:
		return "Any"
	case 1:
		return parts[0]
	}
	return "Union[" + strings.Join(parts, ", ") + "]"
}

// pyFieldName returns the attribute name of a JSON property: invalid
// characters become underscores, and names Python or the generated class
// reserve get a trailing underscore.
func pyFieldName(jsonName string, m *Model) string {
	var b strings.Builder
	for i, r := range jsonName {
		switch {
		case r == '_' || unicode.IsLetter(r) && r < unicode.MaxASCII:
			b.WriteRune(r)
		case unicode.IsDigit(r) && r < unicode.MaxASCII:
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		name = "_"
	}
	if _, isDef := m.Defs[name]; pyKeywords[name] || pyMemberNames[name] || isDef {
		name += "_"
	}
	return name
}

// pyIsIdent reports whether s is an ASCII Python identifier.
func pyIsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r))
		if !ok {
			return false
		}
	}
	return true
}

// pySnake turns a CamelCase name into snake_case, keeping acronyms whole:
// "ContentBlock" → "content_block", "ImageMIMEType" → "image_mime_type".
func pySnake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// pyConstName returns the UPPER_SNAKE constant name for a definition,
// pluralising the last word when plural is set: "ErrorCode" → "ERROR_CODES".
func pyConstName(name string, plural bool) string {
	s := strings.ToUpper(pySnake(name))
	if !plural {
		return s
	}
	switch {
	case strings.HasSuffix(s, "S"), strings.HasSuffix(s, "X"), strings.HasSuffix(s, "Z"),
		strings.HasSuffix(s, "CH"), strings.HasSuffix(s, "SH"):
		return s + "ES"
	case strings.HasSuffix(s, "Y") && len(s) > 1 && !strings.ContainsRune("AEIOU", rune(s[len(s)-2])):
		return s[:len(s)-1] + "IES"
	}
	return s + "S"
}

// pyStr returns a Python string literal for s. JSON string syntax is valid
// Python string syntax.
func pyStr(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return strings.TrimSuffix(b.String(), "\n")
}

// pyArticle returns "an" before names that start with a vowel letter, else "a".
func pyArticle(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an"
	}
	return "a"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyDocEscape makes text safe inside a """ docstring.
func pyDocEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `"""`, `\"\"\"`)
}

// pyWrap fills text into lines of at most width characters (longer words
// stay whole). Newlines in text start new lines; blank lines are kept. The
// TypeScript emitter shares it.
func pyWrap(text string, width int) []string {
	return pyFill(text, "", "", width)
}

// pyFill is pyWrap with prefixes: the first line starts with first, every
// other line with rest, and width counts the prefixes. Blank lines carry
// the prefix without its trailing spaces.
func pyFill(text, first, rest string, width int) []string {
	var out []string
	prefix := first
	for _, para := range strings.Split(strings.TrimSpace(text), "\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			out = append(out, strings.TrimRight(prefix, " "))
			prefix = rest
			continue
		}
		line := prefix + words[0]
		for _, word := range words[1:] {
			if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
				out = append(out, line)
				line = rest + word
				continue
			}
			line += " " + word
		}
		out = append(out, line)
		prefix = rest
	}
	return out
}

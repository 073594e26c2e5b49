package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// tsWidth is the column the generated TypeScript wraps JSDoc comments at.
const tsWidth = 80

// TypeScript returns the declaration file clients/node/types.d.ts for the
// model: an interface per object, a string-literal union per enum, a
// discriminated union per oneOf with its `type` union, and a result map per
// union whose variants name results.
func TypeScript(m *Model) ([]byte, error) {
	if err := tsCheck(m); err != nil {
		return nil, err
	}
	w := &tsWriter{m: m}
	for _, line := range m.generatedBy("//") {
		w.p("%s", line)
	}
	w.p("//")
	for _, line := range pyFill("Types of "+m.title()+", generated from its JSON Schema. Every message is one JSON object per line; unions are discriminated on `type`. Newer servers may add event types and optional fields: handle unknown `type` values gracefully.", "// ", "// ", tsWidth) {
		w.p("%s", line)
	}
	for _, f := range m.Files {
		w.p("")
		w.p("// ---- %s: %s ----", f.Name, f.Title)
		if f.Description != "" {
			for _, line := range pyFill(f.Description, "// ", "// ", tsWidth) {
				w.p("%s", line)
			}
		}
		for _, d := range f.Defs {
			w.p("")
			w.def(d)
		}
	}
	return w.buf.Bytes(), nil
}

// TypeScriptExamples returns clients/node/test/examples.gen.ts: every
// schema example as a constant typed with its declaration, so that
// `tsc --strict --noEmit` proves types.d.ts accepts the examples.
func TypeScriptExamples(m *Model) ([]byte, error) {
	if err := tsCheck(m); err != nil {
		return nil, err
	}
	w := &tsWriter{m: m}
	for _, line := range m.generatedBy("//") {
		w.p("%s", line)
	}
	w.p("//")
	w.p("// Every example of the protocol schema, typed with its declaration from")
	w.p("// types.d.ts: type-checking this file proves the declarations accept them.")
	w.p("")
	var names []string
	for _, d := range m.sorted() {
		names = append(names, d.Name)
	}
	for _, u := range tsResultUnions(m) {
		names = append(names, u.Name+"ResultMap", u.Name+"Type")
	}
	sort.Strings(names)
	w.p("import type {")
	for _, n := range names {
		w.p("  %s,", n)
	}
	w.p("} from \"../types.js\";")
	for _, d := range m.sorted() {
		for i, ex := range d.Examples {
			var b bytes.Buffer
			if err := json.Indent(&b, ex, "", "  "); err != nil {
				return nil, fmt.Errorf("%s: example %d: %w", d.Name, i, err)
			}
			w.p("")
			w.p("export const %s_%d: %s = %s;", d.Name, i, d.Name, b.String())
		}
	}
	for _, u := range tsResultUnions(m) {
		mapName, typeName := u.Name+"ResultMap", u.Name+"Type"
		w.p("")
		w.p("// Compiles only when %s has exactly one key per %s.", mapName, typeName)
		w.p("export const %s_keys: [keyof %s] extends [%s]", mapName, mapName, typeName)
		w.p("  ? [%s] extends [keyof %s]", typeName, mapName)
		w.p("    ? true")
		w.p("    : never")
		w.p("  : never = true;")
	}
	return w.buf.Bytes(), nil
}

// tsReserved are names a definition may not take: TypeScript's reserved
// words and the built-in types the declarations use.
var tsReserved = map[string]bool{
	"any": true, "bigint": true, "boolean": true, "never": true, "null": true,
	"number": true, "object": true, "string": true, "symbol": true,
	"undefined": true, "unknown": true, "void": true, "Array": true,
	"Record": true, "break": true, "case": true, "catch": true, "class": true,
	"const": true, "continue": true, "debugger": true, "default": true,
	"delete": true, "do": true, "else": true, "enum": true, "export": true,
	"extends": true, "false": true, "finally": true, "for": true,
	"function": true, "if": true, "import": true, "in": true,
	"instanceof": true, "new": true, "return": true, "super": true,
	"switch": true, "this": true, "throw": true, "true": true, "try": true,
	"typeof": true, "var": true, "while": true, "with": true,
}

// tsCheck reports definitions whose names TypeScript cannot use and clashes
// with the names the emitter adds (<Union>Type, <Union>ResultMap).
func tsCheck(m *Model) error {
	taken := map[string]string{}
	claim := func(name, what string) error {
		if prev, dup := taken[name]; dup {
			return fmt.Errorf("typescript: %s and %s would both be named %s", prev, what, name)
		}
		taken[name] = what
		return nil
	}
	for _, d := range m.sorted() {
		if !tsIsIdent(d.Name) || tsReserved[d.Name] {
			return fmt.Errorf("typescript: definition name %q cannot be a TypeScript type name", d.Name)
		}
		if err := claim(d.Name, "definition "+d.Name); err != nil {
			return err
		}
		if d.Kind == KindUnion {
			for _, v := range d.Variants {
				if v.Kind != KindObject || v.TypeConst == "" {
					return fmt.Errorf("typescript: %s: variant %s is not an object with a `type` const", d.Name, v.Name)
				}
			}
			if err := claim(d.Name+"Type", "the type union of "+d.Name); err != nil {
				return err
			}
		}
	}
	for _, u := range tsResultUnions(m) {
		if err := claim(u.Name+"ResultMap", "the result map of "+u.Name); err != nil {
			return err
		}
	}
	return nil
}

// tsResultUnions returns the unions with at least one variant that names a
// result (`x-result`), in schema order.
func tsResultUnions(m *Model) []*Def {
	var out []*Def
	for _, d := range m.sorted() {
		if d.Kind != KindUnion {
			continue
		}
		for _, v := range d.Variants {
			if v.Result != "" {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// tsWriter accumulates a TypeScript file.
type tsWriter struct {
	m   *Model
	buf bytes.Buffer
}

func (w *tsWriter) p(format string, args ...any) {
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// doc writes text as a JSDoc comment with the given indent.
func (w *tsWriter) doc(indent, text string) {
	text = strings.ReplaceAll(text, "*/", `*\/`)
	if one := indent + "/** " + strings.TrimSpace(text) + " */"; !strings.Contains(text, "\n") && len([]rune(one)) <= tsWidth {
		w.p("%s", one)
		return
	}
	w.p("%s/**", indent)
	for _, line := range pyFill(text, indent+" * ", indent+" * ", tsWidth) {
		w.p("%s", line)
	}
	w.p("%s */", indent)
}

// def writes the declarations of one definition.
func (w *tsWriter) def(d *Def) {
	w.doc("", d.Description)
	switch d.Kind {
	case KindObject:
		w.p("export interface %s {", d.Name)
		if d.TypeConst != "" {
			w.doc("  ", "Always `"+d.TypeConst+"`.")
			w.p("  type: %s;", tsStr(d.TypeConst))
		}
		for _, f := range d.Fields {
			w.doc("  ", f.Description)
			opt := "?"
			if f.Required {
				opt = ""
			}
			w.p("  %s%s: %s;", tsProp(f.JSONName), opt, tsFieldType(f))
		}
		w.p("}")
	case KindEnum:
		w.p("export type %s =", d.Name)
		for i, v := range d.Enum {
			if doc := d.EnumDocs[v]; doc != "" {
				w.doc("  ", doc)
			}
			end := ""
			if i == len(d.Enum)-1 {
				end = ";"
			}
			w.p("  | %s%s", tsStr(v), end)
		}
	case KindScalar:
		w.p("export type %s = %s;", d.Name, tsJSONType(d.Scalar))
	case KindCustom:
		var parts []string
		seen := map[string]bool{}
		for _, t := range d.JSONTypes {
			if s := tsJSONType(t); !seen[s] {
				seen[s] = true
				parts = append(parts, s)
			}
		}
		w.p("export type %s = %s;", d.Name, strings.Join(parts, " | "))
	case KindUnion:
		w.p("export type %s =", d.Name)
		for i, v := range d.Variants {
			end := ""
			if i == len(d.Variants)-1 {
				end = ";"
			}
			w.p("  | %s%s", v.Name, end)
		}
		w.p("")
		w.doc("", fmt.Sprintf("The `type` of every %s variant.", d.Name))
		w.p("export type %sType = %s[\"type\"];", d.Name, d.Name)
		w.resultMap(d)
	}
}

// resultMap writes <Union>ResultMap when the union's variants name results.
func (w *tsWriter) resultMap(u *Def) {
	has := false
	for _, v := range u.Variants {
		has = has || v.Result != ""
	}
	if !has {
		return
	}
	w.p("")
	w.doc("", fmt.Sprintf("The `data` of a successful response, by the %s's `type`; `undefined` for those whose response carries no data.", u.Name))
	w.p("export interface %sResultMap {", u.Name)
	for _, v := range u.Variants {
		if v.Result == "" {
			w.doc("  ", fmt.Sprintf("%s returns no data.", v.Name))
			w.p("  %s: undefined;", tsProp(v.TypeConst))
			continue
		}
		w.doc("  ", fmt.Sprintf("The result of %s.", v.Name))
		w.p("  %s: %s;", tsProp(v.TypeConst), v.Result)
	}
	w.p("}")
}

// tsFieldType returns the TypeScript type of a field.
func tsFieldType(f *Field) string {
	if len(f.Const) > 0 {
		return string(f.Const) // a JSON scalar is also a TypeScript literal type
	}
	if f.Type.Nullable {
		return tsType(f.Type) + " | null" // null means absent
	}
	return tsType(f.Type)
}

// tsType returns the TypeScript type of a field type.
func tsType(t *Type) string {
	switch t.Kind {
	case TString:
		if len(t.Enum) > 0 {
			vals := make([]string, len(t.Enum))
			for i, v := range t.Enum {
				vals[i] = tsStr(v)
			}
			return strings.Join(vals, " | ")
		}
		return "string"
	case TInteger, TNumber:
		return "number"
	case TBoolean:
		return "boolean"
	case TAny:
		return "unknown"
	case TObject:
		return "Record<string, unknown>"
	case TRef:
		return t.Ref.Name
	case TArray:
		item := tsType(t.Items)
		if strings.ContainsAny(item, " |<") {
			return "Array<" + item + ">"
		}
		return item + "[]"
	}
	return "unknown"
}

// tsJSONType returns the TypeScript type of a JSON Schema type name.
func tsJSONType(s string) string {
	switch s {
	case "string":
		return "string"
	case "integer", "number":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "object":
		return "Record<string, unknown>"
	case "array":
		return "unknown[]"
	}
	return "unknown"
}

// tsProp returns a property name, quoted when it is not an identifier.
func tsProp(name string) string {
	if tsIsIdent(name) {
		return name
	}
	return tsStr(name)
}

// tsIsIdent reports whether s is an ASCII TypeScript identifier.
func tsIsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && !(i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// tsStr returns a TypeScript string literal for s; JSON string syntax is
// valid TypeScript.
func tsStr(s string) string { return pyStr(s) }

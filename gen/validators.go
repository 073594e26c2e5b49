package gen

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// validators writes one validation function per definition. They check a
// decoded JSON value (from encoding/json with UseNumber) against exactly
// the keywords the schema uses — type, required, additionalProperties,
// properties, items, $ref, oneOf by `type`, enum, const, minimum,
// minLength, pattern and the date-time format — and report problems in
// the words of the reference validator, so that the runtime checks every
// message without loading a JSON Schema engine.
func (g *goGen) validators() error {
	var patterns []string
	patternVar := map[string]string{}
	addPattern := func(p string) string {
		if v, ok := patternVar[p]; ok {
			return v
		}
		v := fmt.Sprintf("pattern%d", len(patterns))
		patterns = append(patterns, p)
		patternVar[p] = v
		return v
	}
	var body strings.Builder
	for _, d := range g.m.sorted() {
		fn := "validate" + d.Name
		fmt.Fprintf(&body, "// %s checks a value against %s.\n", fn, d.Name)
		fmt.Fprintf(&body, "func %s(v any, at *wirecodec.Loc, errs *[]string) {\n", fn)
		switch d.Kind {
		case KindObject:
			g.objectCheck(&body, d, addPattern)
		case KindUnion:
			g.unionCheck(&body, d)
		case KindEnum:
			body.WriteString(g.valueCheck(&Type{Kind: TString, Enum: d.Enum}, "v", "at", addPattern))
		case KindScalar:
			kind := map[string]TypeKind{"string": TString, "integer": TInteger, "number": TNumber, "boolean": TBoolean}[d.Scalar]
			body.WriteString(g.valueCheck(&Type{Kind: kind, Check: d.Check}, "v", "at", addPattern))
		case KindCustom:
			var ts []string
			for _, t := range d.JSONTypes {
				ts = append(ts, strconv.Quote(t))
			}
			fmt.Fprintf(&body, "\twirecodec.CheckJSONTypes(v, at, errs, %s)\n", strings.Join(ts, ", "))
		}
		body.WriteString("}\n\n")
	}
	defs := g.m.sorted()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	if len(patterns) > 0 {
		g.p("// Patterns of the schema, compiled at their first use: a process")
		g.p("// that never checks a value with a pattern never compiles one.")
		g.p("var (")
		for i, p := range patterns {
			g.p("\tpattern%d = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(%q) })", i, p)
		}
		g.p(")")
		g.p("")
	}
	g.openFields(defs)
	g.p("// validatorsByDef maps every definition's name to its validator.")
	g.p("var validatorsByDef = map[string]wirecodec.Check{")
	for _, d := range defs {
		g.p("\t%q: validate%s,", d.Name, d.Name)
	}
	g.p("}")
	g.p("")
	g.buf.WriteString(body.String())
	return nil
}

func (g *goGen) objectCheck(b *strings.Builder, d *Def, addPattern func(string) string) {
	b.WriteString("\tm, ok := v.(map[string]any)\n\tif !ok {\n\t\twirecodec.TypeProblem(v, at, errs, \"object\")\n\t\treturn\n\t}\n")
	var req []string
	if d.TypeConst != "" {
		req = append(req, strconv.Quote("type"))
	}
	for _, f := range d.Fields {
		if f.Required {
			req = append(req, strconv.Quote(f.JSONName))
		}
	}
	if len(req) > 0 {
		fmt.Fprintf(b, "\twirecodec.CheckRequired(m, at, errs, %s)\n", strings.Join(req, ", "))
	}
	var known []string
	if d.TypeConst != "" {
		known = append(known, strconv.Quote("type"))
	}
	for _, f := range d.Fields {
		known = append(known, strconv.Quote(f.JSONName))
	}
	if !d.Open {
		fmt.Fprintf(b, "\tfor k := range m {\n\t\tswitch k {\n\t\tcase %s:\n\t\t\tcontinue\n\t\t}\n\t\twirecodec.AdditionalProblem(m, at, errs, %s)\n\t\tbreak\n\t}\n", strings.Join(known, ", "), strings.Join(known, ", "))
	}
	if d.TypeConst != "" {
		fmt.Fprintf(b, "\tif x, ok := m[\"type\"]; ok {\n\t\twirecodec.CheckConst(x, &wirecodec.Loc{Parent: at, Key: \"type\"}, errs, %q)\n\t}\n", strconv.Quote(d.TypeConst))
	}
	for _, f := range d.Fields {
		check := g.valueCheck(f.Type, "x", "at", addPattern)
		if strings.TrimSpace(check) == "" {
			continue // any JSON value is allowed
		}
		if f.Type.Nullable {
			// null stands for absent
			fmt.Fprintf(b, "\tif x, ok := m[%q]; ok && x != nil {\n", f.JSONName)
		} else {
			fmt.Fprintf(b, "\tif x, ok := m[%q]; ok {\n", f.JSONName)
		}
		fmt.Fprintf(b, "\t\tat := &wirecodec.Loc{Parent: at, Key: %q}\n", f.JSONName)
		b.WriteString(indent(check, "\t"))
		b.WriteString("\t}\n")
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// valueCheck returns statements checking value expr (an any) at location
// expression at against type t.
func (g *goGen) valueCheck(t *Type, expr, at string, addPattern func(string) string) string {
	var b strings.Builder
	c := t.Check
	if len(c.Const) > 0 {
		fmt.Fprintf(&b, "\twirecodec.CheckConst(%s, %s, errs, %q)\n", expr, at, string(c.Const))
		if t.Kind != TRef && t.Kind != TArray {
			return b.String()
		}
	}
	switch t.Kind {
	case TString:
		fmt.Fprintf(&b, "\tif s, ok := %s.(string); !ok {\n\t\twirecodec.TypeProblem(%s, %s, errs, \"string\")\n\t} else {\n", expr, expr, at)
		if len(t.Enum) > 0 {
			var qs []string
			for _, e := range t.Enum {
				qs = append(qs, strconv.Quote(e))
			}
			fmt.Fprintf(&b, "\t\twirecodec.CheckEnum(s, %s, errs, %s)\n", at, strings.Join(qs, ", "))
		}
		if c.MinLength != nil {
			fmt.Fprintf(&b, "\t\twirecodec.CheckMinLength(s, %s, errs, %d)\n", at, *c.MinLength)
		}
		if c.Pattern != "" {
			fmt.Fprintf(&b, "\t\twirecodec.CheckPattern(s, %s, errs, %s(), %q)\n", at, addPattern(c.Pattern), c.Pattern)
		}
		if c.Format == "date-time" {
			fmt.Fprintf(&b, "\t\twirecodec.CheckDateTime(s, %s, errs)\n", at)
		}
		b.WriteString("\t\t_ = s\n\t}\n")
	case TInteger, TNumber:
		fmt.Fprintf(&b, "\twirecodec.CheckNumber(%s, %s, errs, %v, %s)\n", expr, at, t.Kind == TInteger, floatPtr(c.Minimum))
	case TBoolean:
		fmt.Fprintf(&b, "\tif _, ok := %s.(bool); !ok {\n\t\twirecodec.TypeProblem(%s, %s, errs, \"boolean\")\n\t}\n", expr, expr, at)
	case TAny:
	case TObject:
		fmt.Fprintf(&b, "\tif _, ok := %s.(map[string]any); !ok {\n\t\twirecodec.TypeProblem(%s, %s, errs, \"object\")\n\t}\n", expr, expr, at)
	case TRef:
		fmt.Fprintf(&b, "\tvalidate%s(%s, %s, errs)\n", t.Ref.Name, expr, at)
	case TArray:
		fmt.Fprintf(&b, "\tif list, ok := %s.([]any); !ok {\n\t\twirecodec.TypeProblem(%s, %s, errs, \"array\")\n\t} else {\n\t\tfor i, item := range list {\n\t\t\tat := &wirecodec.Loc{Parent: %s, Index: i, IsIndex: true}\n", expr, expr, at, at)
		b.WriteString(indent(g.valueCheck(t.Items, "item", "at", addPattern), "\t\t"))
		b.WriteString("\t\t}\n")
		if c.MinItems != nil {
			fmt.Fprintf(&b, "\t\twirecodec.CheckMinItems(len(list), %s, errs, %d)\n", at, *c.MinItems)
		}
		b.WriteString("\t}\n")
	}
	return b.String()
}

func floatPtr(f *float64) string {
	if f == nil {
		return "nil"
	}
	return fmt.Sprintf("wirecodec.Ptr(%s)", strconv.FormatFloat(*f, 'g', -1, 64))
}

func (g *goGen) unionCheck(b *strings.Builder, d *Def) {
	b.WriteString("\tm, ok := v.(map[string]any)\n\tif !ok {\n\t\twirecodec.TypeProblem(v, at, errs, \"object\")\n\t\treturn\n\t}\n")
	b.WriteString("\ttyp, ok := m[\"type\"].(string)\n\tif !ok {\n\t\twirecodec.CheckRequired(m, at, errs, \"type\")\n\t\tif _, present := m[\"type\"]; present {\n\t\t\twirecodec.TypeProblem(m[\"type\"], &wirecodec.Loc{Parent: at, Key: \"type\"}, errs, \"string\")\n\t\t}\n\t\treturn\n\t}\n")
	b.WriteString("\tswitch typ {\n")
	var all []string
	for _, v := range d.Variants {
		fmt.Fprintf(b, "\tcase %q:\n\t\tvalidate%s(v, at, errs)\n", v.TypeConst, v.Name)
		all = append(all, strconv.Quote(v.TypeConst))
	}
	fmt.Fprintf(b, "\tdefault:\n\t\twirecodec.CheckEnum(typ, &wirecodec.Loc{Parent: at, Key: \"type\"}, errs, %s)\n\t}\n", strings.Join(all, ", "))
}

// openFields writes the table of the open objects (those that allow
// members they do not define): for each, its fields, each with the open
// object its value holds (directly or as array items), if any. A reader
// walks it to find, and drop, the members it ignores.
func (g *goGen) openFields(defs []*Def) {
	if !slices.ContainsFunc(defs, func(d *Def) bool { return d.Kind == KindObject && d.Open }) {
		return // a strict protocol
	}
	g.p("// openFields maps each open object (one that allows members it does not")
	g.p("// define; it is read leniently) to its fields, each with the open object")
	g.p("// its value holds, directly or as array items (\"\" for none).")
	g.p("var openFields = map[string]map[string]string{")
	for _, d := range defs {
		if d.Kind != KindObject || !d.Open {
			continue
		}
		g.p("\t%q: {", d.Name)
		var names []string
		inner := map[string]string{}
		if d.TypeConst != "" {
			names = append(names, "type")
		}
		for _, f := range d.Fields {
			names = append(names, f.JSONName)
			t := f.Type
			if t.Kind == TArray {
				t = t.Items
			}
			if t.Kind == TRef && t.Ref.Kind == KindObject && t.Ref.Open {
				inner[f.JSONName] = t.Ref.Name
			}
		}
		sort.Strings(names)
		for _, n := range names {
			g.p("\t\t%q: %q,", n, inner[n])
		}
		g.p("\t},")
	}
	g.p("}")
	g.p("")
}

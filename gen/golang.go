package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"sort"
	"strings"
)

// GoTypes writes the Go wire types: a struct per object definition, a
// sealed interface per union with decoding that switches on `type`,
// appenders that always write the right `type`, and constants for type
// names and enum values. [GoValidators] writes their validators.
func GoTypes(m *Model, pkg string) ([]byte, error) {
	g := &goGen{m: m}
	g.typeConsts()
	g.errors()
	for _, d := range m.sorted() {
		var err error
		switch d.Kind {
		case KindObject:
			err = g.object(d)
		case KindUnion:
			err = g.union(d)
		case KindEnum:
			g.enum(d)
		case KindScalar:
			err = g.scalar(d)
		case KindCustom:
			// written by hand in the package
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	g.registry()
	return g.file(pkg)
}

// GoValidators writes the Go validators: one function per definition that
// checks a decoded JSON value against it, the tables they are looked up
// in, and the entry points every protocol package has alike over
// package wirecodec's shared code (ValidationError, ValidateDef and the
// unexported validateVariant and validators). rules names a variable
// the package defines by hand, a map[string]func(v any) []string of
// checks the generator does not express ([wirecodec.Validators].Rules);
// "" when there is none.
func GoValidators(m *Model, pkg, rules string) ([]byte, error) {
	g := &goGen{m: m}
	g.validationEntry(rules)
	g.validationTables()
	if err := g.validators(); err != nil {
		return nil, err
	}
	return g.file(pkg)
}

// validationEntry writes the entry points of the validators.
func (g *goGen) validationEntry(rules string) {
	g.p("// ValidationError reports a message that does not match its schema. Its")
	g.p("// Error is one line: the JSON path of each problem and what is wrong there.")
	g.p("type ValidationError = wirecodec.ValidationError")
	g.p("")
	g.p("// validators are the checks below, with the tables they are found by.")
	if rules != "" {
		g.p("var validators = &wirecodec.Validators{ByDef: validatorsByDef, Unions: unionVariants, Rules: %s}", rules)
	} else {
		g.p("var validators = &wirecodec.Validators{ByDef: validatorsByDef, Unions: unionVariants}")
	}
	g.p("")
	g.p("// ValidateDef checks data against the named definition of %s.", g.m.title())
	g.p("// The checks are generated from the schema and report problems as JSON")
	g.p("// pointers, in the words of a JSON Schema validator; the tests hold them to")
	g.p("// its verdicts. A mismatch is a *ValidationError.")
	g.p("func ValidateDef(def string, data []byte) error { return validators.Def(def, data) }")
	g.p("")
	g.p("// validateVariant validates data against the variant of union named by")
	g.p("// its `type`.")
	g.p("func validateVariant(union string, data []byte) error { return validators.Variant(union, data) }")
	g.p("")
}

// file returns the formatted Go file of package pkg holding what g has
// written, after the header and the imports the body uses.
func (g *goGen) file(pkg string) ([]byte, error) {
	body := g.buf.String()
	g.buf.Reset()
	for _, line := range g.m.generatedBy("//") {
		g.p("%s", line)
	}
	g.p("")
	g.p("package %s", pkg)
	g.p("")
	g.p("import (")
	for _, imp := range []string{"encoding/json", "reflect", "regexp", "strconv", "sync"} {
		if strings.Contains(body, path.Base(imp)+".") {
			g.p("\t%q", imp)
		}
	}
	if strings.Contains(body, "wirecodec.") {
		g.p("")
		g.p("\t%q", wirecodecPath)
	}
	g.p(")")
	g.p("")
	g.buf.WriteString(body)
	src, err := format.Source(g.buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting generated Go: %w\n%s", err, g.buf.Bytes())
	}
	return src, nil
}

// wirecodecPath is the package of the code every generated package shares.
const wirecodecPath = "zot.dev/zot/internal/wirecodec"

// errors writes the error types the package's decoders return, and
// decodeError, which names the JSON types of the hand-written types.
func (g *goGen) errors() {
	g.p("// UnknownTypeError is returned when a message's `type` names no variant of")
	g.p("// the union being decoded. Its fields are Union (e.g. \"Command\") and Type")
	g.p("// (the `type` value received).")
	g.p("type UnknownTypeError = wirecodec.UnknownTypeError")
	g.p("")
	g.p("// DecodeError is returned when a message cannot be decoded into its type.")
	g.p("// Its message is one line. Its fields are Type (the message's `type`,")
	g.p("// when known), Field (the JSON path of the offending field, when known),")
	g.p("// Msg, and Err (the underlying encoding/json error, if any), which Unwrap")
	g.p("// returns.")
	g.p("type DecodeError = wirecodec.DecodeError")
	g.p("")
	var custom []*Def
	for _, d := range g.m.sorted() {
		if d.Kind == KindCustom {
			custom = append(custom, d)
		}
	}
	g.p("// customKinds names the JSON types of the hand-written types, which")
	g.p("// encoding/json cannot tell, for decode errors.")
	g.p("var customKinds = map[reflect.Type]string{")
	for _, d := range custom {
		var kinds []string
		for _, t := range d.JSONTypes {
			if t != "null" {
				kinds = append(kinds, t)
			}
		}
		g.p("\treflect.TypeFor[%s](): %q,", d.GoType, strings.Join(kinds, " or "))
	}
	g.p("}")
	g.p("")
	g.p("// decodeError turns an encoding/json error met decoding a message of")
	g.p("// type typ into a *DecodeError.")
	g.p("func decodeError(typ string, err error) error {")
	g.p("\treturn wirecodec.NewDecodeError(typ, err, customKinds)")
	g.p("}")
	g.p("")
}

type goGen struct {
	m   *Model
	buf bytes.Buffer
}

func (g *goGen) p(format string, args ...any) {
	fmt.Fprintf(&g.buf, format, args...)
	g.buf.WriteByte('\n')
}

// comment writes text as a Go comment, one sentence block, prefixed.
func (g *goGen) comment(indent, text string) {
	for _, line := range wrap(text, 76) {
		g.p("%s// %s", indent, line)
	}
}

// wrap splits text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func (g *goGen) typeConsts() {
	var defs []*Def
	for _, d := range g.m.sorted() {
		if d.Kind == KindObject && d.TypeConst != "" {
			defs = append(defs, d)
		}
	}
	g.p("// The `type` value of every message kind.")
	g.p("const (")
	for _, d := range defs {
		g.p("\t// Type%s is the `type` of %s.", d.Name, d.Name)
		g.p("\tType%s = %q", d.Name, d.TypeConst)
	}
	g.p(")")
	g.p("")
}

// goType returns the Go type of a field.
func (g *goGen) goType(f *Field) (string, error) {
	t, err := g.typeOf(f.Type)
	if err != nil {
		return "", err
	}
	if !f.Required && isPointerWhenOptional(f.Type) {
		return "*" + t, nil
	}
	return t, nil
}

// isPointerWhenOptional reports whether an optional field of type t is a
// pointer, so that its zero value can be told from its absence.
func isPointerWhenOptional(t *Type) bool {
	switch t.Kind {
	case TInteger, TNumber, TBoolean:
		return true
	case TRef:
		return t.Ref.Kind == KindObject
	}
	return false
}

func (g *goGen) typeOf(t *Type) (string, error) {
	switch t.Kind {
	case TString:
		return "string", nil
	case TInteger:
		return "int64", nil
	case TNumber:
		return "float64", nil
	case TBoolean:
		return "bool", nil
	case TAny, TObject:
		return "json.RawMessage", nil
	case TRef:
		switch t.Ref.Kind {
		case KindCustom:
			return t.Ref.GoType, nil
		case KindUnion:
			return "", fmt.Errorf("a field holding a single union (%s) is not supported; use an array", t.Ref.Name)
		}
		return t.Ref.Name, nil
	case TArray:
		if t.Items.Kind == TRef && t.Items.Ref.Kind == KindUnion {
			return t.Items.Ref.Name + "s", nil
		}
		it, err := g.typeOf(t.Items)
		if err != nil {
			return "", err
		}
		return "[]" + it, nil
	}
	return "", fmt.Errorf("unknown type kind %d", t.Kind)
}

func (g *goGen) object(d *Def) error {
	g.comment("", d.Name+": "+d.Description)
	g.p("type %s struct {", d.Name)
	for _, f := range d.Fields {
		t, err := g.goType(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f.JSONName, err)
		}
		desc := f.Description
		if !f.Required {
			desc += " Optional."
		}
		g.comment("\t", desc)
		tag := f.JSONName
		if !f.Required {
			tag += ",omitempty"
		}
		g.p("\t%s %s `json:%q`", goName(f.JSONName), t, tag)
	}
	g.p("}")
	g.p("")
	// Appender and marshaller.
	g.p("// AppendJSON appends the JSON encoding of v to b: one line, fields in")
	g.p("// schema order%s.", map[bool]string{true: ", `type` first", false: ""}[d.TypeConst != ""])
	g.p("func (v %s) AppendJSON(b []byte) []byte {", d.Name)
	// written tracks whether a member precedes the next one: "no", "yes",
	// or "maybe" (decided at run time, after optional fields).
	written := "no"
	needStart := false
	if d.TypeConst == "" {
		for _, f := range d.Fields {
			if f.Required {
				break
			}
			needStart = true
		}
	}
	g.p("\tb = append(b, '{')")
	if needStart {
		g.p("\tstart := len(b)")
	}
	if d.TypeConst != "" {
		g.p("\tb = append(b, `\"type\":%q`...)", d.TypeConst)
		written = "yes"
	}
	for _, f := range d.Fields {
		name := "v." + goName(f.JSONName)
		if !f.Required {
			g.p("\tif %s {", g.presentCond(f, name))
		}
		switch written {
		case "no":
			g.p("\tb = append(b, `%q:`...)", f.JSONName)
		case "yes":
			g.p("\tb = append(b, `,%q:`...)", f.JSONName)
		default:
			g.p("\tif len(b) > start {")
			g.p("\t\tb = append(b, ',')")
			g.p("\t}")
			g.p("\tb = append(b, `%q:`...)", f.JSONName)
		}
		val := name
		if !f.Required && isPointerWhenOptional(f.Type) {
			val = "(*" + name + ")"
		}
		stmt, err := g.appendStmt(f.Type, val)
		if err != nil {
			return fmt.Errorf("%s: %w", f.JSONName, err)
		}
		g.p("\t%s", stmt)
		if !f.Required {
			g.p("\t}")
			if written == "no" {
				written = "maybe"
			}
		} else {
			written = "yes"
		}
	}
	g.p("\treturn append(b, '}')")
	g.p("}")
	g.p("")
	g.p("// MarshalJSON encodes v as one line of JSON%s.", map[bool]string{true: ", `type` included", false: ""}[d.TypeConst != ""])
	g.p("func (v %s) MarshalJSON() ([]byte, error) { return v.AppendJSON(make([]byte, 0, 128)), nil }", d.Name)
	g.p("")
	if d.TypeConst != "" {
		g.p("// Type returns %q, the `type` of %s.", d.TypeConst, d.Name)
		g.p("func (*%s) Type() string { return Type%s }", d.Name, d.Name)
		g.p("")
	}
	for _, u := range d.Unions {
		g.p("func (*%s) is%s() {}", d.Name, u.Name)
		g.p("")
		for _, cf := range g.commonFields(u) {
			gt, _ := g.goType(cf)
			n := goName(cf.JSONName)
			g.p("// Get%s returns the %s field.", n, cf.JSONName)
			g.p("func (v *%s) Get%s() %s { return v.%s }", d.Name, n, gt, n)
			g.p("")
			g.p("// Set%s sets the %s field.", n, cf.JSONName)
			g.p("func (v *%s) Set%s(x %s) { v.%s = x }", d.Name, n, gt, n)
			g.p("")
		}
	}
	return nil
}

// presentCond returns the Go condition under which an optional field is
// written.
func (g *goGen) presentCond(f *Field, name string) string {
	if isPointerWhenOptional(f.Type) {
		return name + " != nil"
	}
	switch f.Type.Kind {
	case TString:
		return name + ` != ""`
	case TAny, TObject:
		return "len(" + name + ") != 0"
	case TArray:
		// nil means absent; an empty list that was sent is sent back.
		return name + " != nil"
	case TRef:
		switch f.Type.Ref.Kind {
		case KindCustom:
			return "!" + name + ".IsZero()"
		case KindEnum, KindScalar:
			return name + ` != ""`
		}
	}
	return "true"
}

// appendStmt returns a statement appending the JSON of val (of type t) to b.
func (g *goGen) appendStmt(t *Type, val string) (string, error) {
	switch t.Kind {
	case TString:
		return "b = wirecodec.AppendString(b, " + val + ")", nil
	case TInteger:
		return "b = strconv.AppendInt(b, " + val + ", 10)", nil
	case TNumber:
		return "b = wirecodec.AppendFloat(b, " + val + ")", nil
	case TBoolean:
		return "b = strconv.AppendBool(b, " + val + ")", nil
	case TAny, TObject:
		return "b = wirecodec.AppendRaw(b, " + val + ")", nil
	case TRef:
		switch t.Ref.Kind {
		case KindCustom:
			return "b = " + val + ".AppendJSON(b)", nil
		case KindEnum:
			return "b = wirecodec.AppendString(b, string(" + val + "))", nil
		case KindScalar:
			switch t.Ref.Scalar {
			case "string":
				return "b = wirecodec.AppendString(b, " + val + ")", nil
			}
			return "", fmt.Errorf("scalar %s of type %s not supported", t.Ref.Name, t.Ref.Scalar)
		}
		return "b = " + val + ".AppendJSON(b)", nil
	case TArray:
		if t.Items.Kind == TRef && t.Items.Ref.Kind == KindUnion {
			return "b = " + val + ".AppendJSON(b)", nil
		}
		inner, err := g.appendStmt(t.Items, "x")
		if err != nil {
			return "", err
		}
		return "b = append(b, '[')\n\tfor i, x := range " + val + " {\n\t\tif i > 0 {\n\t\t\tb = append(b, ',')\n\t\t}\n\t\t" + inner + "\n\t}\n\tb = append(b, ']')", nil
	}
	return "", fmt.Errorf("cannot append kind %d", t.Kind)
}

// commonFields returns the fields every variant of union u has with the
// same JSON name, type and requiredness, in the first variant's order.
func (g *goGen) commonFields(u *Def) []*Field {
	var out []*Field
	if len(u.Variants) < 2 {
		return nil
	}
	for _, f := range u.Variants[0].Fields {
		ft, _ := g.goType(f)
		all := true
		for _, v := range u.Variants[1:] {
			found := false
			for _, vf := range v.Fields {
				vt, _ := g.goType(vf)
				if vf.JSONName == f.JSONName && vt == ft && vf.Required == f.Required {
					found = true
				}
			}
			all = all && found
		}
		if all {
			out = append(out, f)
		}
	}
	return out
}

func (g *goGen) union(d *Def) error {
	g.comment("", d.Name+": "+d.Description+" The concrete types are the pointers "+variantList(d)+", and *Unknown"+d.Name+" for one that did not decode (see NewUnknown"+d.Name+").")
	g.p("type %s interface {", d.Name)
	g.p("\t// Type returns the variant's `type` value.")
	g.p("\tType() string")
	g.p("\t// AppendJSON appends the variant's JSON encoding, `type` included.")
	g.p("\tAppendJSON(b []byte) []byte")
	g.p("\tjson.Marshaler")
	for _, cf := range g.commonFields(d) {
		gt, err := g.goType(cf)
		if err != nil {
			return err
		}
		n := goName(cf.JSONName)
		g.comment("\t", fmt.Sprintf("Get%s returns the %s field: %s", n, cf.JSONName, cf.Description))
		g.p("\tGet%s() %s", n, gt)
		g.p("\t// Set%s sets the %s field.", n, cf.JSONName)
		g.p("\tSet%s(%s)", n, gt)
	}
	g.p("\tis%s()", d.Name)
	g.p("}")
	g.p("")
	g.p("// New%s returns a new zero %s of the given `type`, or nil when no", d.Name, d.Name)
	g.p("// variant has that type.")
	g.p("func New%s(typ string) %s {", d.Name, d.Name)
	g.p("\tswitch typ {")
	for _, v := range d.Variants {
		g.p("\tcase Type%s:", v.Name)
		g.p("\t\treturn new(%s)", v.Name)
	}
	g.p("\t}")
	g.p("\treturn nil")
	g.p("}")
	g.p("")
	g.p("// Decode%s decodes one %s, choosing the variant by its `type` field.", d.Name, d.Name)
	g.p("// It does not validate against the schema; see Validate%s.", d.Name)
	g.p("func Decode%s(data []byte) (%s, error) {", d.Name, d.Name)
	g.p("\ttyp, err := wirecodec.PeekType(data)")
	g.p("\tif err != nil {")
	g.p("\t\treturn nil, err")
	g.p("\t}")
	g.p("\tv := New%s(typ)", d.Name)
	g.p("\tif v == nil {")
	g.p("\t\treturn nil, &wirecodec.UnknownTypeError{Union: %q, Type: typ}", d.Name)
	g.p("\t}")
	g.p("\tif err := json.Unmarshal(data, v); err != nil {")
	g.p("\t\treturn nil, decodeError(typ, err)")
	g.p("\t}")
	g.p("\treturn v, nil")
	g.p("}")
	g.p("")
	g.p("// %ss is a list of %s values that decodes each element by its `type`.", d.Name, d.Name)
	g.p("type %ss []%s", d.Name, d.Name)
	g.p("")
	g.p("// UnmarshalJSON decodes a JSON array of %s values.", d.Name)
	g.p("func (l *%ss) UnmarshalJSON(data []byte) error {", d.Name)
	g.p("\treturn wirecodec.DecodeList(data, (*[]%s)(l), Decode%s)", d.Name, d.Name)
	g.p("}")
	g.p("")
	g.p("// AppendJSON appends the JSON array of the list; a nil list is written as [].")
	g.p("func (l %ss) AppendJSON(b []byte) []byte {", d.Name)
	g.p("\tb = append(b, '[')")
	g.p("\tfor i, x := range l {")
	g.p("\t\tif i > 0 {")
	g.p("\t\t\tb = append(b, ',')")
	g.p("\t\t}")
	g.p("\t\tif x == nil {")
	g.p("\t\t\tb = append(b, \"null\"...)")
	g.p("\t\t\tcontinue")
	g.p("\t\t}")
	g.p("\t\tb = x.AppendJSON(b)")
	g.p("\t}")
	g.p("\treturn append(b, ']')")
	g.p("}")
	g.p("")
	g.p("// MarshalJSON encodes the list as a JSON array.")
	g.p("func (l %ss) MarshalJSON() ([]byte, error) { return l.AppendJSON(nil), nil }", d.Name)
	g.p("")
	g.droppable(d)
	return g.unknown(d)
}

// droppable writes Droppable<Union>, which reports whether a value is of
// a variant the schema marks `x-droppable`, when the union has any.
func (g *goGen) droppable(d *Def) {
	var cases []string
	for _, v := range d.Variants {
		if v.Droppable {
			cases = append(cases, "*"+v.Name)
		}
	}
	if len(cases) == 0 {
		return
	}
	g.comment("", fmt.Sprintf("Droppable%s reports whether v is of a variant the schema marks droppable (`x-droppable`): one a server may drop for a reader that has fallen behind instead of waiting for it. Every other variant reaches every reader. The droppable variants are %s.", d.Name, strings.Join(cases, ", ")))
	g.p("func Droppable%s(v %s) bool {", d.Name, d.Name)
	g.p("\tswitch v.(type) {")
	g.p("\tcase %s:", strings.Join(cases, ", "))
	g.p("\t\treturn true")
	g.p("\t}")
	g.p("\treturn false")
	g.p("}")
	g.p("")
}

// unknownFields are the fields of every Unknown<Union> type besides the
// union's common fields, which may not take their names.
var unknownFields = []string{"TypeName", "Raw", "Err"}

// unknown writes Unknown<Union>, the variant that holds a member of union
// d that did not decode, as a newer peer may send, and its constructor.
func (g *goGen) unknown(d *Def) error {
	name := "Unknown" + d.Name
	common := g.commonFields(d)
	g.comment("", fmt.Sprintf("%s is %s %s that did not decode into its variant: a `type` this package does not know, or members that do not fit, as a newer peer may send. It keeps the object as it came. Decode%s never returns one, since a message it cannot read is an error; a reader that must not drop messages, such as a client, makes one with New%s.", name, article(d.Name), d.Name, d.Name, name))
	g.p("type %s struct {", name)
	g.p("	// TypeName is the `type` member.")
	g.p("	TypeName string")
	for _, cf := range common {
		gt, err := g.goType(cf)
		if err != nil {
			return err
		}
		n := goName(cf.JSONName)
		for _, taken := range unknownFields {
			if n == taken {
				return fmt.Errorf("%s: common field %s clashes with %s.%s", d.Name, cf.JSONName, name, n)
			}
		}
		g.p("	// %s is the %s member, when it could be read.", n, cf.JSONName)
		g.p("	%s %s", n, gt)
	}
	g.p("	// Raw is the whole JSON object, `type` included.")
	g.p("	Raw json.RawMessage")
	g.p("	// Err says why it did not decode: an *UnknownTypeError for a `type`")
	g.p("	// this package does not know, else the decoding error.")
	g.p("	Err error")
	g.p("}")
	g.p("")
	g.p("// New%s keeps data, %s %s of type typ that did not decode", name, article(d.Name), d.Name)
	g.p("// because of err. It reads the fields every %s has where it can, and", d.Name)
	g.p("// returns nil when data is not valid JSON.")
	g.p("func New%s(typ string, data []byte, err error) *%s {", name, name)
	g.p("	if !json.Valid(data) {")
	g.p("		return nil")
	g.p("	}")
	g.p("	v := &%s{TypeName: typ, Raw: append(json.RawMessage(nil), data...), Err: err}", name)
	if len(common) > 0 {
		g.p("	// A field of the wrong type is skipped; the others are still read.")
		g.p("	var common struct {")
		for _, cf := range common {
			gt, _ := g.goType(cf)
			g.p("		%s %s `json:%q`", goName(cf.JSONName), gt, cf.JSONName)
		}
		g.p("	}")
		g.p("	_ = json.Unmarshal(data, &common)")
		for _, cf := range common {
			n := goName(cf.JSONName)
			g.p("	v.%s = common.%s", n, n)
		}
	}
	g.p("	return v")
	g.p("}")
	g.p("")
	g.p("// Type returns the `type` member.")
	g.p("func (v *%s) Type() string { return v.TypeName }", name)
	g.p("")
	g.p("// AppendJSON appends the object as it came, on one line; fields set")
	g.p("// since are not written.")
	g.p("func (v *%s) AppendJSON(b []byte) []byte { return wirecodec.AppendRaw(b, v.Raw) }", name)
	g.p("")
	g.p("// MarshalJSON returns the object as it came, on one line.")
	g.p("func (v *%s) MarshalJSON() ([]byte, error) { return v.AppendJSON(nil), nil }", name)
	g.p("")
	for _, cf := range common {
		gt, _ := g.goType(cf)
		n := goName(cf.JSONName)
		g.p("// Get%s returns the %s field.", n, cf.JSONName)
		g.p("func (v *%s) Get%s() %s { return v.%s }", name, n, gt, n)
		g.p("")
		g.p("// Set%s sets the %s field; Raw is left as it came.", n, cf.JSONName)
		g.p("func (v *%s) Set%s(x %s) { v.%s = x }", name, n, gt, n)
		g.p("")
	}
	g.p("func (*%s) is%s() {}", name, d.Name)
	g.p("")
	return nil
}

// article returns "an" before names that start with a vowel letter, else "a".
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an"
	}
	return "a"
}

func variantList(d *Def) string {
	var names []string
	for _, v := range d.Variants {
		names = append(names, "*"+v.Name)
	}
	return strings.Join(names, ", ")
}

func (g *goGen) enum(d *Def) {
	g.comment("", d.Name+": "+d.Description)
	g.p("type %s string", d.Name)
	g.p("")
	g.p("// The values of %s.", d.Name)
	g.p("const (")
	for _, v := range d.Enum {
		if doc := d.EnumDocs[v]; doc != "" {
			g.comment("\t", doc)
		}
		g.p("\t%s%s %s = %q", enumPrefix(d), camelEnum(v), d.Name, v)
	}
	g.p(")")
	g.p("")
	g.p("// %sValues lists every %s, in schema order.", d.Name, d.Name)
	g.p("var %sValues = []%s{", d.Name, d.Name)
	for _, v := range d.Enum {
		g.p("\t%s%s,", enumPrefix(d), camelEnum(v))
	}
	g.p("}")
	g.p("")
}

// enumPrefix is the prefix of an enum's constants: ErrorCode values read
// as CodeBusy, StopReason values as StopEndTurn, others as Name+Value.
func enumPrefix(d *Def) string {
	switch d.Name {
	case "ErrorCode":
		return "Code"
	case "StopReason":
		return "Stop"
	case "Role":
		return "Role"
	case "ImageMIMEType":
		return "MIME"
	}
	return d.Name
}

func (g *goGen) scalar(d *Def) error {
	if d.Scalar != "string" {
		return fmt.Errorf("scalar of type %s not supported", d.Scalar)
	}
	g.comment("", d.Name+": "+d.Description)
	g.p("type %s = string", d.Name)
	g.p("")
	return nil
}

// validationTables writes the tables the validation entry points use.
func (g *goGen) validationTables() {
	g.p("// unionVariants maps each union's name to its variants' definition")
	g.p("// names by `type` value.")
	g.p("var unionVariants = map[string]map[string]string{")
	for _, u := range g.m.Unions() {
		g.p("\t%q: {", u.Name)
		vs := append([]*Def(nil), u.Variants...)
		sort.Slice(vs, func(i, j int) bool { return vs[i].TypeConst < vs[j].TypeConst })
		for _, v := range vs {
			g.p("\t\t%q: %q,", v.TypeConst, v.Name)
		}
		g.p("\t},")
	}
	g.p("}")
	g.p("")
	defs := g.m.sorted()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	var cmds []*Def
	for _, d := range defs {
		if d.Result != "" && d.TypeConst != "" {
			cmds = append(cmds, d)
		}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].TypeConst < cmds[j].TypeConst })
	if len(cmds) == 0 {
		return // a protocol without command results (the extension frames)
	}
	g.p("// commandResults maps each command's `type` to the definition name of")
	g.p("// its response data; commands without data are absent.")
	g.p("var commandResults = map[string]string{")
	for _, d := range cmds {
		g.p("\t%q: %q,", d.TypeConst, d.Result)
	}
	g.p("}")
	g.p("")
}

// registry writes the lookups of the Go types by name.
func (g *goGen) registry() {
	defs := g.m.sorted()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	var cmds []*Def
	for _, d := range defs {
		if d.Result != "" && d.TypeConst != "" {
			cmds = append(cmds, d)
		}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].TypeConst < cmds[j].TypeConst })
	g.p("// newByDef returns a new zero value of the Go type of the named")
	g.p("// definition (unions excepted), or nil.")
	g.p("func newByDef(name string) any {")
	g.p("\tswitch name {")
	for _, d := range defs {
		switch d.Kind {
		case KindObject, KindEnum:
			g.p("\tcase %q:", d.Name)
			g.p("\t\treturn new(%s)", d.Name)
		case KindCustom:
			g.p("\tcase %q:", d.Name)
			g.p("\t\treturn new(%s)", d.GoType)
		case KindScalar:
			g.p("\tcase %q:", d.Name)
			g.p("\t\treturn new(string)")
		}
	}
	g.p("\t}")
	g.p("\treturn nil")
	g.p("}")
	g.p("")
	if len(cmds) == 0 {
		return // no command has response data
	}
	g.p("// NewResult returns a new zero value of the response data of the")
	g.p("// command with the given `type`, or nil when that command has none.")
	g.p("func NewResult(command string) any {")
	g.p("\tswitch command {")
	for _, d := range cmds {
		g.p("\tcase Type%s:", d.Name)
		g.p("\t\treturn new(%s)", d.Result)
	}
	g.p("\t}")
	g.p("\treturn nil")
	g.p("}")
}

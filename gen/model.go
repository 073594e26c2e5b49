package gen

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// title returns the protocol's name for generated prose.
func (m *Model) title() string {
	if m.Title == "" {
		return "the protocol"
	}
	return m.Title
}

// Kind says what a schema definition becomes in generated code.
type Kind int

// The kinds of definitions the generator understands.
const (
	// KindObject is an object with named properties: a struct.
	KindObject Kind = iota
	// KindUnion is a oneOf of object definitions told apart by their
	// `type` const: a sealed interface.
	KindUnion
	// KindEnum is a string with an enum: a named string type with constants.
	KindEnum
	// KindScalar is a named string, number or boolean with constraints.
	KindScalar
	// KindCustom is a definition whose Go type is written by hand in the
	// target package (`x-go-type`).
	KindCustom
)

// Model is one schema folder, a protocol, as the generator sees it.
type Model struct {
	// Title names the protocol in generated prose, e.g. "zot's RPC
	// protocol"; [Generate] sets it from the target.
	Title string
	// Dir is the schema folder, e.g. "schema/rpc".
	Dir   string
	Files []*File
	// Defs holds every definition by name; names are unique across files.
	Defs map[string]*Def
}

// File is one schema file.
type File struct {
	Name        string // the name in its folder, as references use it, e.g. "events.json"
	Path        string // the path from the repository root, e.g. "schema/rpc/events.json"
	ID          string // the $id: "https://zot.dev/" followed by Path
	Title       string
	Description string
	Defs        []*Def // in document order
}

// Def is one named definition.
type Def struct {
	Name        string
	File        *File
	Kind        Kind
	Description string
	Examples    []json.RawMessage

	// Fields are an object's properties in document order.
	Fields []*Field
	// TypeConst is the value of an object's `type` const, if it has one.
	TypeConst string
	// Variants are a union's members in document order.
	Variants []*Def
	// Unions are the unions this object is a variant of.
	Unions []*Def
	// Enum and EnumDocs describe an enum's values.
	Enum     []string
	EnumDocs map[string]string
	// Scalar is the JSON type of a scalar definition.
	Scalar string
	// Check holds a scalar definition's value checks.
	Check Constraints
	// Result names the definition of a command's response data (`x-result`).
	Result string
	// GoType is the hand-written Go type of a custom definition.
	GoType string
	// JSONTypes lists the JSON types a custom definition accepts.
	JSONTypes []string
}

// URL returns the definition's absolute schema reference, e.g.
// "https://zot.dev/schema/rpc/events.json#/$defs/DoneEvent".
func (d *Def) URL() string { return d.File.ID + "#/$defs/" + d.Name }

// Field is one property of an object definition.
type Field struct {
	JSONName    string
	Description string
	Required    bool
	Type        *Type
	// Const holds the JSON text of a `const`, if any (e.g. `true`).
	Const json.RawMessage
}

// TypeKind is the shape of a field's type.
type TypeKind int

// The shapes a field's type can take.
const (
	TString TypeKind = iota
	TInteger
	TNumber
	TBoolean
	TAny    // any JSON value, kept as raw text
	TObject // a free-form JSON object, kept as raw text
	TRef    // a named definition
	TArray
)

// Type is a field's type.
type Type struct {
	Kind  TypeKind
	Ref   *Def  // TRef
	Items *Type // TArray
	Enum  []string
	Check Constraints
}

// Constraints are the value checks a schema puts on a string or number.
type Constraints struct {
	Minimum   *float64        // minimum, for numbers
	MinLength *int            // minLength, for strings
	Pattern   string          // pattern, for strings
	Format    string          // format, for strings (only date-time is checked)
	Const     json.RawMessage // const, as JSON text
}

// constraints reads the value checks of a schema node.
func constraints(n *node) (Constraints, error) {
	var c Constraints
	if m := n.get("minimum"); m != nil {
		var f float64
		if err := json.Unmarshal(m.raw, &f); err != nil {
			return c, fmt.Errorf("minimum: %w", err)
		}
		c.Minimum = &f
	}
	if m := n.get("minLength"); m != nil {
		var i int
		if err := json.Unmarshal(m.raw, &i); err != nil {
			return c, fmt.Errorf("minLength: %w", err)
		}
		c.MinLength = &i
	}
	c.Pattern = n.get("pattern").str()
	c.Format = n.get("format").str()
	if k := n.get("const"); k != nil {
		c.Const = k.raw
	}
	return c, nil
}

// IDBase prefixes the path of a schema file to make its `$id`.
const IDBase = "https://zot.dev/"

// Load reads the schema files dir/*.json of fsys (the repository root),
// one protocol, and builds its model. References between files of the
// folder name the file alone ("content.json#/$defs/ContentBlock").
func Load(fsys fs.FS, dir string) (*Model, error) {
	pattern := path.Join(dir, "*.json")
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no %s files", pattern)
	}
	sort.Strings(names)
	m := &Model{Dir: dir, Defs: map[string]*Def{}}
	type pending struct {
		def  *Def
		node *node
	}
	var all []pending
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		root, err := parseNode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f := &File{
			Name:        path.Base(name),
			Path:        name,
			ID:          root.get("$id").str(),
			Title:       root.get("title").str(),
			Description: root.get("description").str(),
		}
		if want := IDBase + f.Path; f.ID != want {
			return nil, fmt.Errorf("%s: $id is %q, want %q", name, f.ID, want)
		}
		if s := root.get("$schema").str(); s != "https://json-schema.org/draft/2020-12/schema" {
			return nil, fmt.Errorf("%s: $schema must be draft 2020-12, got %q", name, s)
		}
		defs := root.get("$defs")
		if defs == nil {
			return nil, fmt.Errorf("%s: no $defs", name)
		}
		m.Files = append(m.Files, f)
		for _, dn := range defs.keys {
			if prev, dup := m.Defs[dn]; dup {
				return nil, fmt.Errorf("%s: definition %s already defined in %s", name, dn, prev.File.Name)
			}
			d := &Def{Name: dn, File: f}
			m.Defs[dn] = d
			f.Defs = append(f.Defs, d)
			all = append(all, pending{d, defs.vals[dn]})
		}
	}
	for _, p := range all {
		if err := m.fill(p.def, p.node); err != nil {
			return nil, fmt.Errorf("%s#/$defs/%s: %w", p.def.File.Name, p.def.Name, err)
		}
	}
	for _, p := range all {
		if p.def.Kind == KindUnion {
			for _, v := range p.def.Variants {
				v.Unions = append(v.Unions, p.def)
			}
		}
		if p.def.Result != "" {
			if r, ok := m.Defs[p.def.Result]; !ok || r.Kind != KindObject {
				return nil, fmt.Errorf("%s: x-result %q is not an object definition", p.def.Name, p.def.Result)
			}
		}
	}
	return m, nil
}

func (m *Model) fill(d *Def, n *node) error {
	d.Description = n.get("description").str()
	if d.Description == "" {
		return fmt.Errorf("missing description")
	}
	ex := n.get("examples")
	if ex == nil || len(ex.items) == 0 {
		return fmt.Errorf("missing examples")
	}
	for _, e := range ex.items {
		d.Examples = append(d.Examples, e.raw)
	}
	d.Result = n.get("x-result").str()
	switch {
	case n.get("x-go-type") != nil:
		d.Kind = KindCustom
		d.GoType = n.get("x-go-type").str()
		t := n.get("type")
		if t != nil && t.kind == 'a' {
			for _, it := range t.items {
				d.JSONTypes = append(d.JSONTypes, it.str())
			}
		} else {
			d.JSONTypes = []string{t.str()}
		}
	case n.get("oneOf") != nil:
		d.Kind = KindUnion
		for _, it := range n.get("oneOf").items {
			v, err := m.resolve(d.File, it.get("$ref").str())
			if err != nil {
				return err
			}
			d.Variants = append(d.Variants, v)
		}
	case n.get("enum") != nil && n.get("type").str() == "string":
		d.Kind = KindEnum
		for _, it := range n.get("enum").items {
			d.Enum = append(d.Enum, it.str())
		}
		if docs := n.get("x-enum-descriptions"); docs != nil {
			d.EnumDocs = map[string]string{}
			for _, k := range docs.keys {
				d.EnumDocs[k] = docs.vals[k].str()
			}
			for _, v := range d.Enum {
				if d.EnumDocs[v] == "" {
					return fmt.Errorf("enum value %q has no x-enum-descriptions entry", v)
				}
			}
		}
	case n.get("type").str() == "object":
		d.Kind = KindObject
		req := map[string]bool{}
		for _, r := range n.get("required").itemsOrNil() {
			req[r.str()] = true
		}
		props := n.get("properties")
		if props == nil {
			return fmt.Errorf("object without properties")
		}
		for _, pn := range props.keys {
			pv := props.vals[pn]
			if pn == "type" && pv.get("const") != nil {
				d.TypeConst = pv.get("const").str()
				if !req["type"] {
					return fmt.Errorf("the type const must be required")
				}
				continue
			}
			f := &Field{JSONName: pn, Description: pv.get("description").str(), Required: req[pn]}
			if f.Description == "" {
				return fmt.Errorf("property %s: missing description", pn)
			}
			if c := pv.get("const"); c != nil {
				f.Const = c.raw
			}
			t, err := m.fieldType(d.File, pv)
			if err != nil {
				return fmt.Errorf("property %s: %w", pn, err)
			}
			f.Type = t
			d.Fields = append(d.Fields, f)
		}
		for r := range req {
			if props.get(r) == nil {
				return fmt.Errorf("required property %s is not defined", r)
			}
		}
	case n.get("type") != nil:
		d.Kind = KindScalar
		d.Scalar = n.get("type").str()
		c, err := constraints(n)
		if err != nil {
			return err
		}
		d.Check = c
	default:
		return fmt.Errorf("cannot tell what kind of definition this is")
	}
	return nil
}

func (n *node) itemsOrNil() []*node {
	if n == nil {
		return nil
	}
	return n.items
}

func (m *Model) resolve(from *File, ref string) (*Def, error) {
	file, name, ok := strings.Cut(ref, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	if file == "" {
		file = from.Name
	}
	d, found := m.Defs[name]
	if !found || d.File.Name != file {
		return nil, fmt.Errorf("$ref %q points nowhere", ref)
	}
	return d, nil
}

func (m *Model) fieldType(from *File, n *node) (*Type, error) {
	t, err := m.fieldShape(from, n)
	if err != nil {
		return nil, err
	}
	if t.Check, err = constraints(n); err != nil {
		return nil, err
	}
	return t, nil
}

func (m *Model) fieldShape(from *File, n *node) (*Type, error) {
	if ref := n.get("$ref").str(); ref != "" {
		d, err := m.resolve(from, ref)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: TRef, Ref: d}, nil
	}
	if c := n.get("const"); c != nil {
		switch c.kind {
		case 's':
			return &Type{Kind: TString}, nil
		case 'b':
			return &Type{Kind: TBoolean}, nil
		case 'n':
			return &Type{Kind: TNumber}, nil
		}
	}
	t := n.get("type")
	if t == nil {
		return &Type{Kind: TAny}, nil
	}
	switch t.str() {
	case "string":
		tt := &Type{Kind: TString}
		for _, e := range n.get("enum").itemsOrNil() {
			tt.Enum = append(tt.Enum, e.str())
		}
		return tt, nil
	case "integer":
		return &Type{Kind: TInteger}, nil
	case "number":
		return &Type{Kind: TNumber}, nil
	case "boolean":
		return &Type{Kind: TBoolean}, nil
	case "object":
		return &Type{Kind: TObject}, nil
	case "array":
		items, err := m.fieldType(from, n.get("items"))
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		return &Type{Kind: TArray, Items: items}, nil
	}
	return nil, fmt.Errorf("unsupported type %s", t.raw)
}

// Unions returns every union definition, sorted by name.
func (m *Model) Unions() []*Def {
	var out []*Def
	for _, d := range m.sorted() {
		if d.Kind == KindUnion {
			out = append(out, d)
		}
	}
	return out
}

// sorted returns every definition in file order, then document order.
func (m *Model) sorted() []*Def {
	var out []*Def
	for _, f := range m.Files {
		out = append(out, f.Defs...)
	}
	return out
}

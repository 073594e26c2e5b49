package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/format"
	"io/fs"
	"sort"
	"strings"
	"unicode"
)

// JSONRPCTarget is a protocol spoken as JSON-RPC 2.0 whose schema is
// written in the style of the Agent Client Protocol's published one: one
// file of `$defs`, unions as `oneOf`/`anyOf` of objects that carry a
// discriminator `const` and an `allOf` reference to their body, optional
// members as `anyOf [T, null]` or `type [T, "null"]`, the method a type
// belongs to in `x-method` and `x-side`.
//
// Such schemas are not written for zot's generator of [Targets] (whose
// rules they break: no `$id`, camelCase members, discriminators other
// than `type`), so they have their own, [GenerateJSONRPC].
type JSONRPCTarget struct {
	// Name names the target in messages, e.g. "acp".
	Name string
	// Schema is the schema file, e.g. "schema/acp/schema.json".
	Schema string
	// Meta, when set, is the protocol's method inventory (ACP's
	// meta.json): its version and method names become constants.
	Meta string
	// GoFile is the generated Go file; GoPackage its package.
	GoFile, GoPackage string
	// Prefix is put before every generated Go name of this target
	// (e.g. "Zot"), so two targets share a package.
	Prefix string
	// Doc is a document with generated sections; DocMethods and DocErrors
	// name its sections that list the methods and the error codes ("" for
	// none).
	Doc                   string
	DocMethods, DocErrors string
	// Clients puts the target's types and methods in the ACP clients'
	// generated files ([ACPPython], [ACPTypeScript], [ACPNodeConsts]).
	Clients bool
}

// JSONRPCTargets are the JSON-RPC protocols of the daemon: the Agent
// Client Protocol as published (vendored in schema/acp/, never edited),
// and zot's own methods and errors on top of it (schema/daemon/).
var JSONRPCTargets = []JSONRPCTarget{
	{
		Name:       "acp",
		Schema:     "schema/acp/schema.json",
		Meta:       "schema/acp/meta.json",
		GoFile:     "internal/acp/acp_gen.go",
		GoPackage:  "acp",
		Doc:        "docs/daemon.md",
		DocMethods: "acpmethods",
		Clients:    true,
	},
	{
		Name:       "daemon",
		Schema:     "schema/daemon/daemon.json",
		GoFile:     "internal/acp/daemon_gen.go",
		GoPackage:  "acp",
		Doc:        "docs/daemon.md",
		DocMethods: "zotmethods",
		DocErrors:  "daemonerrors",
		Clients:    true,
	},
}

// GenerateJSONRPC generates every target of targets from fsys, the
// repository root, and returns the files keyed by path. Targets that
// share a document fill its sections together.
func GenerateJSONRPC(fsys fs.FS, targets []JSONRPCTarget) (map[string][]byte, error) {
	out := map[string][]byte{}
	docs := map[string]map[string]string{} // doc → section → body
	var docOrder []string
	var clients []*rpcSchema // the targets the ACP clients' types come from
	for _, t := range targets {
		s, err := loadRPCSchema(fsys, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		if t.Clients {
			clients = append(clients, s)
		}
		src, err := s.goFile()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		out[t.GoFile] = src
		if t.Doc == "" {
			continue
		}
		if docs[t.Doc] == nil {
			docs[t.Doc] = map[string]string{}
			docOrder = append(docOrder, t.Doc)
		}
		if t.DocMethods != "" {
			docs[t.Doc][t.DocMethods] = s.methodsDoc()
		}
		if t.DocErrors != "" {
			docs[t.Doc][t.DocErrors] = s.errorsDoc()
		}
	}
	if len(clients) > 0 {
		for p, data := range clientFiles(clients) {
			out[p] = data
		}
	}
	for _, p := range docOrder {
		doc, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		if out[p], err = replaceSections(doc, docs[p]); err != nil {
			return nil, fmt.Errorf("generating %s: %w", p, err)
		}
	}
	return out, nil
}

// replaceSections replaces each generated section of doc named in
// bodies, which must each appear once; doc may hold no other.
func replaceSections(doc []byte, bodies map[string]string) ([]byte, error) {
	found := map[string]int{}
	var failure error
	out := markerRE.ReplaceAllFunc(doc, func(match []byte) []byte {
		sub := markerRE.FindSubmatch(match)
		name, endName := string(sub[2]), string(sub[4])
		body, ok := bodies[name]
		switch {
		case name != endName:
			failure = fmt.Errorf("section %q ends with marker %q", name, endName)
			return match
		case !ok:
			failure = fmt.Errorf("unknown generated section %q", name)
			return match
		}
		found[name]++
		return append(append(append([]byte{}, sub[1]...), body...), sub[3]...)
	})
	if failure != nil {
		return nil, failure
	}
	for name := range bodies {
		if found[name] != 1 {
			return nil, fmt.Errorf("section %q appears %d times; want once (markers `<!-- BEGIN GENERATED: %s -->` … `<!-- END GENERATED: %s -->`)", name, found[name], name, name)
		}
	}
	return out, nil
}

// rpcSchema is one loaded schema file of a JSONRPCTarget.
type rpcSchema struct {
	t       JSONRPCTarget
	sum     string // sha256 of the schema file, hex
	metaSum string
	defs    map[string]*node
	names   []string // definition names, sorted
	version string   // meta.json's version
	methods []rpcMethod
	buf     bytes.Buffer
}

// rpcMethod is one method of the protocol.
type rpcMethod struct {
	Key    string // meta.json's key, e.g. session_new; "" for schema-only methods
	Name   string // wire name, e.g. session/new
	Side   string // who serves it: agent, client or protocol
	Params string // definition of the params, "" when the schema names none
	Result string // definition of the result, "" for a notification
}

func loadRPCSchema(fsys fs.FS, t JSONRPCTarget) (*rpcSchema, error) {
	data, err := fs.ReadFile(fsys, t.Schema)
	if err != nil {
		return nil, err
	}
	root, err := parseNode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Schema, err)
	}
	sum := sha256.Sum256(data)
	s := &rpcSchema{t: t, sum: hex.EncodeToString(sum[:]), defs: map[string]*node{}}
	defs := root.get("$defs")
	if defs == nil {
		return nil, fmt.Errorf("%s: no $defs", t.Schema)
	}
	for _, k := range defs.keys {
		s.defs[k] = defs.vals[k]
		s.names = append(s.names, k)
	}
	sort.Strings(s.names)
	// Methods from x-method/x-side: a request's params carry the method,
	// its response the same method on the same side.
	byName := map[string]*rpcMethod{}
	var order []string
	for _, name := range s.names {
		d := s.defs[name]
		m := d.get("x-method").str()
		if m == "" {
			continue
		}
		side := d.get("x-side").str()
		rm := byName[m]
		if rm == nil {
			rm = &rpcMethod{Name: m, Side: side}
			byName[m] = rm
			order = append(order, m)
		}
		switch {
		case strings.HasSuffix(name, "Response"):
			rm.Result = name
		default:
			rm.Params = name
		}
	}
	if t.Meta != "" {
		mdata, err := fs.ReadFile(fsys, t.Meta)
		if err != nil {
			return nil, err
		}
		meta, err := parseNode(mdata)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Meta, err)
		}
		msum := sha256.Sum256(mdata)
		s.metaSum = hex.EncodeToString(msum[:])
		s.version = string(meta.get("version").raw)
		order = order[:0]
		for _, group := range []struct{ key, side string }{{"agentMethods", "agent"}, {"clientMethods", "client"}, {"protocolMethods", "protocol"}} {
			g := meta.get(group.key)
			if g == nil {
				return nil, fmt.Errorf("%s: no %s", t.Meta, group.key)
			}
			for _, k := range g.keys {
				wireName := g.vals[k].str()
				rm := byName[wireName]
				if rm == nil {
					rm = &rpcMethod{Name: wireName, Side: group.side}
					byName[wireName] = rm
				}
				rm.Key = k
				order = append(order, wireName)
			}
		}
	} else {
		sort.Strings(order)
	}
	for _, m := range order {
		s.methods = append(s.methods, *byName[m])
	}
	return s, nil
}

func (s *rpcSchema) p(format string, args ...any) {
	fmt.Fprintf(&s.buf, format, args...)
	s.buf.WriteByte('\n')
}

func (s *rpcSchema) comment(indent, text string) {
	for i, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			s.p("%s//", indent)
		}
		for _, line := range wrap(para, 76) {
			s.p("%s// %s", indent, line)
		}
	}
}

// goName is the Go name of definition name.
func (s *rpcSchema) goName(name string) string { return s.t.Prefix + name }

// goFile writes the target's Go file.
func (s *rpcSchema) goFile() ([]byte, error) {
	s.buf.Reset()
	s.p("// Code generated by zot-gen from %s. DO NOT EDIT.", s.t.Schema)
	s.p("//")
	s.p("// Source: %s, sha256 %s.", s.t.Schema, s.sum)
	if s.t.Meta != "" {
		s.p("// Methods: %s, sha256 %s.", s.t.Meta, s.metaSum)
	}
	s.p("")
	s.p("package %s", s.t.GoPackage)
	s.p("")
	s.p("import (")
	s.p("\t\"encoding/json\"")
	s.p("\t\"fmt\"")
	s.p(")")
	s.p("")
	s.p("var _ = fmt.Errorf // used by the unions' decoders")
	s.p("")
	s.methodConsts()
	for _, name := range s.names {
		if err := s.def(name); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	src := s.buf.Bytes()
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("formatting the generated Go (%w):\n%s", err, src)
	}
	return out, nil
}

// methodConsts writes the protocol version and a constant per method.
func (s *rpcSchema) methodConsts() {
	if s.version != "" {
		s.p("// %sProtocolVersionLatest is the protocol version of %s.", s.t.Prefix, s.t.Schema)
		s.p("const %sProtocolVersionLatest = %s", s.t.Prefix, s.version)
		s.p("")
	}
	if len(s.methods) == 0 {
		return
	}
	s.p("// The methods of the protocol, by their wire names.")
	s.p("const (")
	for _, m := range s.methods {
		s.comment("\t", fmt.Sprintf("%s is served by the %s.", methodConst(m.Name), m.Side))
		s.p("\t%s = %q", methodConst(m.Name), m.Name)
	}
	s.p(")")
	s.p("")
}

// methodConst names the constant of a method: session/new →
// MethodSessionNew, _zot/session/history → MethodZotSessionHistory,
// $/cancel_request → MethodCancelRequest.
func methodConst(name string) string {
	var b strings.Builder
	b.WriteString("Method")
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '_' || r == '$' }) {
		b.WriteString(camelWord(part))
	}
	return b.String()
}

// acpInitialisms are written in upper case inside Go names.
var acpInitialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "uri": "URI", "mcp": "MCP", "http": "HTTP",
	"json": "JSON", "cwd": "CWD", "sse": "SSE", "api": "API",
}

// camelWord capitalises one word, or writes it as an initialism.
func camelWord(w string) string {
	if up, ok := acpInitialisms[strings.ToLower(w)]; ok {
		return up
	}
	if w == "" {
		return ""
	}
	r := []rune(w)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// fieldName turns a camelCase or snake_case member name into a Go name:
// sessionId → SessionID, _meta → Meta, mime_type → MIMEType.
func fieldName(name string) string {
	var words []string
	var cur []rune
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '/' || r == '.':
			if len(cur) > 0 {
				words = append(words, string(cur))
			}
			cur = nil
		case unicode.IsUpper(r) && len(cur) > 0 && !unicode.IsUpper(cur[len(cur)-1]):
			words = append(words, string(cur))
			cur = []rune{r}
		default:
			cur = append(cur, r)
		}
	}
	if len(cur) > 0 {
		words = append(words, string(cur))
	}
	var b strings.Builder
	for _, w := range words {
		b.WriteString(camelWord(w))
	}
	out := b.String()
	if out == "" || !unicode.IsLetter([]rune(out)[0]) {
		out = "X" + out
	}
	return out
}

// refName returns the definition a `$ref` names.
func refName(n *node) string {
	return strings.TrimPrefix(n.str(), "#/$defs/")
}

// soleRef returns the definition n refers to through `$ref` or a
// one-element `allOf`, or "".
func soleRef(n *node) string {
	if r := n.get("$ref"); r != nil {
		return refName(r)
	}
	if all := n.get("allOf"); all != nil && len(all.items) == 1 {
		if r := all.items[0].get("$ref"); r != nil {
			return refName(r)
		}
	}
	return ""
}

// alternatives returns the members of n's oneOf or anyOf.
func alternatives(n *node) []*node {
	if a := n.get("oneOf"); a != nil {
		return a.items
	}
	if a := n.get("anyOf"); a != nil {
		return a.items
	}
	return nil
}

// def writes the Go form of one definition.
func (s *rpcSchema) def(name string) error {
	d := s.defs[name]
	goName := s.goName(name)
	doc := d.get("description").str()
	if doc == "" {
		doc = "is the schema's " + name + "."
	} else {
		doc = "— " + doc
	}
	s.comment("", goName+" "+doc)
	if m := d.get("x-method").str(); m != "" {
		s.p("//")
		s.p("// Method: %s (served by the %s).", m, d.get("x-side").str())
	}
	alts := alternatives(d)
	switch {
	case d.get("properties") != nil && len(alts) == 0:
		return s.object(name, d)
	case len(alts) > 0 && s.isStringEnum(alts):
		return s.stringEnum(name, alts)
	case len(alts) > 0 && s.isIntEnum(alts):
		return s.intEnum(name, alts)
	case len(alts) > 0:
		if tag, ok := s.discriminator(d, alts); ok {
			return s.union(name, d, tag, alts)
		}
		s.raw(name, "its alternatives carry no discriminator, so it is kept as JSON text")
		return nil
	}
	switch t := typeName(d); t {
	case "string":
		s.p("type %s string", goName)
	case "integer":
		s.p("type %s int64", goName)
	case "number":
		s.p("type %s float64", goName)
	case "boolean":
		s.p("type %s bool", goName)
	case "object":
		s.p("type %s map[string]any", goName)
	default:
		s.raw(name, "any JSON value")
		return nil
	}
	s.p("")
	return nil
}

// raw writes a definition kept as JSON text.
func (s *rpcSchema) raw(name, why string) {
	s.p("//")
	s.p("// It is JSON text (%s).", why)
	s.p("type %s = json.RawMessage", s.goName(name))
	s.p("")
}

// typeName returns n's `type`, without "null" when it is a list with it.
func typeName(n *node) string {
	t := n.get("type")
	if t == nil {
		return ""
	}
	if t.kind == 's' {
		return t.str()
	}
	for _, it := range t.items {
		if it.str() != "null" {
			return it.str()
		}
	}
	return ""
}

// nullable reports whether n's `type` lists "null".
func nullable(n *node) bool {
	t := n.get("type")
	if t == nil || t.kind != 'a' {
		return false
	}
	for _, it := range t.items {
		if it.str() == "null" {
			return true
		}
	}
	return false
}

func (s *rpcSchema) isStringEnum(alts []*node) bool {
	for _, a := range alts {
		if typeName(a) != "string" || a.get("properties") != nil {
			return false
		}
	}
	return true
}

func (s *rpcSchema) isIntEnum(alts []*node) bool {
	for _, a := range alts {
		if typeName(a) != "integer" {
			return false
		}
	}
	return true
}

// stringEnum writes a string type with a constant per `const`; an
// alternative without one (ACP's "other") leaves the set open.
func (s *rpcSchema) stringEnum(name string, alts []*node) error {
	goName := s.goName(name)
	err := s.enum(goName, "string", alts, func(_, c *node) (string, string, error) {
		v := c.str()
		return fieldName(v), fmt.Sprintf("%q", v), nil
	})
	if err == nil && alts[0].get("x-code") != nil {
		s.errorKindMethods(goName, alts)
	}
	return err
}

// intEnum writes an integer type with a constant per `const`, named by
// its title.
func (s *rpcSchema) intEnum(name string, alts []*node) error {
	return s.enum(s.goName(name), "int", alts, func(a, c *node) (string, string, error) {
		title := a.get("title").str()
		if title == "" {
			return "", "", fmt.Errorf("integer const %s has no title", c.raw)
		}
		return fieldName(strings.ReplaceAll(title, " ", "_")), string(c.raw), nil
	})
}

// enum writes goName as a type of base with a constant per alternative
// that has a `const` c, its name (after goName) and Go value given by
// constant, and its description as its comment.
func (s *rpcSchema) enum(goName, base string, alts []*node, constant func(a, c *node) (name, value string, err error)) error {
	s.p("type %s %s", goName, base)
	s.p("")
	s.p("// The values of %s.", goName)
	s.p("const (")
	for _, a := range alts {
		c := a.get("const")
		if c == nil {
			continue
		}
		name, value, err := constant(a, c)
		if err != nil {
			return err
		}
		if desc := a.get("description").str(); desc != "" {
			s.comment("\t", desc)
		}
		s.p("\t%s%s %s = %s", goName, name, goName, value)
	}
	s.p(")")
	s.p("")
	return nil
}

// errorKindMethods writes Code and Retryable for an error kind whose
// values carry `x-code` and `x-retryable`.
func (s *rpcSchema) errorKindMethods(goName string, alts []*node) {
	s.p("// Code returns the JSON-RPC error code of k; 0 for a kind this schema")
	s.p("// does not define.")
	s.p("func (k %s) Code() int {", goName)
	s.p("\tswitch k {")
	for _, a := range alts {
		s.p("\tcase %s%s:", goName, fieldName(a.get("const").str()))
		s.p("\t\treturn %s", a.get("x-code").raw)
	}
	s.p("\t}")
	s.p("\treturn 0")
	s.p("}")
	s.p("")
	s.p("// Retryable reports whether the same request may succeed when sent")
	s.p("// again later, unchanged.")
	s.p("func (k %s) Retryable() bool {", goName)
	s.p("\tswitch k {")
	var yes []string
	for _, a := range alts {
		if string(a.get("x-retryable").raw) == "true" {
			yes = append(yes, goName+fieldName(a.get("const").str()))
		}
	}
	if len(yes) > 0 {
		s.p("\tcase %s:", strings.Join(yes, ", "))
		s.p("\t\treturn true")
	}
	s.p("\t}")
	s.p("\treturn false")
	s.p("}")
	s.p("")
}

// unionVariant is one alternative of a discriminated union.
type unionVariant struct {
	tag   string // the const; "" for the variant without the member (the default) or an open one
	body  string // definition of its body; "" for none
	field string // Go field name
	open  bool   // its tag is any other string (ACP's "other")
	desc  string
}

// discriminator returns the member that tells the alternatives apart:
// the schema's `discriminator.propertyName`, or the one member every
// tagged alternative defines as a const.
func (s *rpcSchema) discriminator(d *node, alts []*node) (string, bool) {
	if dn := d.get("discriminator"); dn != nil {
		return dn.get("propertyName").str(), true
	}
	tag := ""
	for _, a := range alts {
		props := a.get("properties")
		if props == nil {
			continue
		}
		if len(props.keys) != 1 {
			return "", false
		}
		k := props.keys[0]
		if tag != "" && k != tag {
			return "", false
		}
		tag = k
	}
	if tag == "" {
		return "", false
	}
	consts := 0
	for _, a := range alts {
		if p := a.get("properties"); p != nil && p.vals[tag].get("const") != nil {
			consts++
		}
	}
	return tag, consts > 0
}

// union writes a discriminated union: a struct with one pointer per
// variant, exactly one of them set, whose JSON is the variant's body
// with the discriminator added. Decoding switches on the discriminator
// and refuses an unknown one (unless the schema keeps the set open).
// Members the union itself defines beside its alternatives (ACP's
// SessionConfigOption has id and name for every variant) go into a
// struct named <Name>Fields, embedded, and written before the variant's.
func (s *rpcSchema) union(name string, d *node, tag string, alts []*node) error {
	goName := s.goName(name)
	base := ""
	if props := d.get("properties"); props != nil && len(props.keys) > 0 {
		if props.vals[tag] != nil {
			return fmt.Errorf("union %s defines its discriminator %q beside its alternatives", name, tag)
		}
		base = goName + "Fields"
	}
	var vs []unionVariant
	hasDefault, hasOpen := false, false
	for _, a := range alts {
		v := unionVariant{body: soleRef(a), desc: a.get("description").str()}
		props := a.get("properties")
		switch {
		case props != nil && props.vals[tag] != nil && props.vals[tag].get("const") != nil:
			if len(props.keys) != 1 {
				return fmt.Errorf("variant %s has members besides %s", props.vals[tag].get("const").raw, tag)
			}
			v.tag = props.vals[tag].get("const").str()
			v.field = fieldName(v.tag)
		case props != nil && props.vals[tag] != nil:
			v.open = true
			v.field = "Other"
			hasOpen = true
		default:
			title := a.get("title").str()
			if title == "" {
				title = v.body
			}
			v.field = fieldName(title)
			if hasDefault {
				return fmt.Errorf("two variants without %q", tag)
			}
			hasDefault = true
		}
		vs = append(vs, v)
	}
	s.p("//")
	s.p("// It is a union: exactly one field is set. On the wire it is the")
	s.p("// variant's object with %q naming the variant.", tag)
	s.p("type %s struct {", goName)
	if base != "" {
		s.p("\t%s", base)
	}
	for _, v := range vs {
		if v.desc != "" {
			s.comment("\t", v.desc)
		}
		switch {
		case v.open:
			s.p("\t// Other holds a variant this schema does not define, as JSON text.")
			s.p("\tOther json.RawMessage")
		case v.body == "":
			s.p("\t%s *struct{}", v.field)
		default:
			s.p("\t%s *%s", v.field, s.goName(v.body))
		}
	}
	s.p("}")
	s.p("")
	// MarshalJSON
	if base != "" {
		s.p("// MarshalJSON writes the members of %s, then the set variant", base)
		s.p("// with its %q.", tag)
		s.p("func (u %s) MarshalJSON() ([]byte, error) {", goName)
		if hasOpen {
			s.p("\tif u.Other != nil {")
			s.p("\t\treturn u.Other, nil // the whole object as it came")
			s.p("\t}")
		}
		s.p("\tfields, err := json.Marshal(u.%s)", base)
		s.p("\tif err != nil {")
		s.p("\t\treturn nil, err")
		s.p("\t}")
		s.p("\tvariant, err := u.variantJSON()")
		s.p("\tif err != nil {")
		s.p("\t\treturn nil, err")
		s.p("\t}")
		s.p("\treturn joinObjects(fields, variant)")
		s.p("}")
		s.p("")
		s.p("// variantJSON writes the set variant with its %q.", tag)
		s.p("func (u %s) variantJSON() ([]byte, error) {", goName)
	} else {
		s.p("// MarshalJSON writes the set variant with its %q.", tag)
		s.p("func (u %s) MarshalJSON() ([]byte, error) {", goName)
	}
	s.p("\tswitch {")
	for _, v := range vs {
		switch {
		case v.open:
			s.p("\tcase u.Other != nil:")
			s.p("\t\treturn u.Other, nil")
		default:
			s.p("\tcase u.%s != nil:", v.field)
			if v.tag == "" {
				s.p("\t\treturn json.Marshal(u.%s)", v.field)
			} else {
				s.p("\t\treturn withTag(%q, %q, u.%s)", tag, v.tag, v.field)
			}
		}
	}
	s.p("\t}")
	s.p("\treturn nil, fmt.Errorf(\"%s: no variant is set\")", goName)
	s.p("}")
	s.p("")
	// UnmarshalJSON
	s.p("// UnmarshalJSON reads the variant %q names.", tag)
	s.p("func (u *%s) UnmarshalJSON(data []byte) error {", goName)
	s.p("\ttag, present, err := readTag(data, %q)", tag)
	s.p("\tif err != nil {")
	s.p("\t\treturn fmt.Errorf(\"%s: %%w\", err)", goName)
	s.p("\t}")
	s.p("\t*u = %s{}", goName)
	if base != "" {
		s.p("\tif err := json.Unmarshal(data, &u.%s); err != nil {", base)
		s.p("\t\treturn fmt.Errorf(\"%s: %%w\", err)", goName)
		s.p("\t}")
	}
	if hasDefault {
		for _, v := range vs {
			if v.tag == "" && !v.open {
				s.p("\tif !present {")
				s.p("\t\tu.%s = new(%s)", v.field, s.goName(v.body))
				s.p("\t\treturn json.Unmarshal(data, u.%s)", v.field)
				s.p("\t}")
			}
		}
	} else {
		s.p("\tif !present {")
		s.p("\t\treturn fmt.Errorf(\"%s: member %%q is missing\", %q)", goName, tag)
		s.p("\t}")
	}
	s.p("\tswitch tag {")
	for _, v := range vs {
		if v.tag == "" {
			continue
		}
		s.p("\tcase %q:", v.tag)
		if v.body == "" {
			s.p("\t\tu.%s = &struct{}{}", v.field)
			s.p("\t\treturn nil")
		} else {
			s.p("\t\tu.%s = new(%s)", v.field, s.goName(v.body))
			s.p("\t\treturn json.Unmarshal(data, u.%s)", v.field)
		}
	}
	s.p("\t}")
	if hasOpen {
		s.p("\tu.Other = append(json.RawMessage(nil), data...)")
		s.p("\treturn nil")
	} else {
		s.p("\treturn fmt.Errorf(\"%s: unknown %s %%q\", tag)", goName, tag)
	}
	s.p("}")
	s.p("")
	if base != "" {
		s.p("// %s are the members every variant of %s has.", base, goName)
		return s.structOf(base, d)
	}
	return nil
}

// object writes a struct. A required member is a plain field; an
// optional one is omitted when empty, and is a pointer when its zero
// value would mean something (a number, a struct, a union).
func (s *rpcSchema) object(name string, d *node) error {
	return s.structOf(s.goName(name), d)
}

// structOf writes the struct goName of d's properties (see object).
func (s *rpcSchema) structOf(goName string, d *node) error {
	props := d.get("properties")
	required := map[string]bool{}
	if r := d.get("required"); r != nil {
		for _, it := range r.items {
			required[it.str()] = true
		}
	}
	var nilSlices []string
	s.p("type %s struct {", goName)
	for _, k := range props.keys {
		p := props.vals[k]
		typ, kind, err := s.propType(p)
		if err != nil {
			return fmt.Errorf("member %s: %w", k, err)
		}
		if desc := p.get("description").str(); desc != "" {
			s.comment("\t", desc)
		}
		tagOpt := ""
		if !required[k] {
			tagOpt = ",omitempty"
			if kind == kindPointerWhenOptional && !strings.HasPrefix(typ, "*") {
				typ = "*" + typ
			}
		} else if kind == kindSlice {
			nilSlices = append(nilSlices, fieldName(k))
		}
		s.p("\t%s %s `json:\"%s%s\"`", fieldName(k), typ, k, tagOpt)
	}
	s.p("}")
	s.p("")
	if len(nilSlices) > 0 {
		// A required array is written as [] when the field is nil.
		s.p("// MarshalJSON writes a nil required array as [].")
		s.p("func (x %s) MarshalJSON() ([]byte, error) {", goName)
		s.p("\ttype plain %s", goName)
		for _, f := range nilSlices {
			s.p("\tif x.%s == nil {", f)
			s.p("\t\tx.%s = make(%s, 0)", f, s.fieldGoType(props, f))
			s.p("\t}")
		}
		s.p("\treturn json.Marshal(plain(x))")
		s.p("}")
		s.p("")
	}
	return nil
}

// fieldGoType returns the Go type of the member whose Go name is field.
func (s *rpcSchema) fieldGoType(props *node, field string) string {
	for _, k := range props.keys {
		if fieldName(k) == field {
			t, _, _ := s.propType(props.vals[k])
			return t
		}
	}
	return ""
}

// How an optional member's type is written.
const (
	kindValue               = iota // its zero value is absent: string, bool, map, raw JSON
	kindPointerWhenOptional        // a pointer when optional: number, struct, union
	kindSlice                      // a slice
)

// propType returns the Go type of a member and how it is made optional.
func (s *rpcSchema) propType(p *node) (string, int, error) {
	if r := soleRef(p); r != "" {
		return s.refType(r)
	}
	if alts := alternatives(p); len(alts) > 0 {
		// anyOf [T, null]
		var ref string
		for _, a := range alts {
			if typeName(a) == "null" {
				continue
			}
			if r := soleRef(a); r != "" && ref == "" {
				ref = r
				continue
			}
			return "json.RawMessage", kindValue, nil
		}
		if ref == "" {
			return "json.RawMessage", kindValue, nil
		}
		t, kind, err := s.refType(ref)
		if err != nil {
			return "", 0, err
		}
		if kind == kindPointerWhenOptional {
			return "*" + t, kind, nil
		}
		return t, kind, nil
	}
	switch typeName(p) {
	case "string":
		if c := p.get("const"); c != nil {
			return "string", kindValue, nil
		}
		if nullable(p) {
			return "*string", kindPointerWhenOptional, nil
		}
		return "string", kindValue, nil
	case "boolean":
		if nullable(p) {
			return "*bool", kindPointerWhenOptional, nil
		}
		return "bool", kindValue, nil
	case "integer":
		return "int64", kindPointerWhenOptional, nil
	case "number":
		return "float64", kindPointerWhenOptional, nil
	case "object":
		return "map[string]any", kindValue, nil
	case "array":
		items := p.get("items")
		if items == nil {
			return "[]json.RawMessage", kindSlice, nil
		}
		it, _, err := s.propType(items)
		if err != nil {
			return "", 0, err
		}
		return "[]" + strings.TrimPrefix(it, "*"), kindSlice, nil
	case "":
		return "json.RawMessage", kindValue, nil
	}
	return "", 0, fmt.Errorf("unsupported type %s", p.get("type").raw)
}

// refType returns the Go type of a reference to definition name.
func (s *rpcSchema) refType(name string) (string, int, error) {
	d := s.defs[name]
	if d == nil {
		return "", 0, fmt.Errorf("unknown definition %q", name)
	}
	goName := s.goName(name)
	alts := alternatives(d)
	switch {
	case d.get("properties") != nil && len(alts) == 0:
		return goName, kindPointerWhenOptional, nil
	case len(alts) > 0 && s.isStringEnum(alts):
		return goName, kindValue, nil
	case len(alts) > 0 && s.isIntEnum(alts):
		return goName, kindPointerWhenOptional, nil
	case len(alts) > 0:
		if _, ok := s.discriminator(d, alts); ok {
			return goName, kindPointerWhenOptional, nil
		}
		return goName, kindValue, nil
	}
	switch typeName(d) {
	case "string", "boolean", "object":
		return goName, kindValue, nil
	case "integer", "number":
		return goName, kindPointerWhenOptional, nil
	}
	return goName, kindValue, nil
}

// methodsDoc is the generated table of the protocol's methods.
func (s *rpcSchema) methodsDoc() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated by zot-gen from %s (sha256 %s). DO NOT EDIT this section; edit the schema. -->\n\n", s.t.Schema, s.sum[:16])
	b.WriteString("| method | served by | params | result |\n|---|---|---|---|\n")
	for _, m := range s.methods {
		params, result := "—", "— (notification)"
		if m.Params != "" {
			params = "`" + m.Params + "`"
		}
		if m.Result != "" {
			result = "`" + m.Result + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Side, params, result)
	}
	b.WriteString("\n")
	for _, m := range s.methods {
		for _, def := range []string{m.Params, m.Result} {
			if def == "" || s.t.Meta != "" {
				continue // ACP's own shapes are documented by ACP
			}
			s.defDoc(&b, def)
		}
	}
	return b.String()
}

// defDoc writes a table of the members of an object definition.
func (s *rpcSchema) defDoc(b *strings.Builder, name string) {
	d := s.defs[name]
	fmt.Fprintf(b, "**`%s`** — %s\n\n", name, firstSentence(d.get("description").str()))
	props := d.get("properties")
	if props == nil || len(props.keys) == 0 {
		b.WriteString("No members.\n\n")
		return
	}
	required := map[string]bool{}
	if r := d.get("required"); r != nil {
		for _, it := range r.items {
			required[it.str()] = true
		}
	}
	b.WriteString("| member | type | required | description |\n|---|---|---|---|\n")
	for _, k := range props.keys {
		p := props.vals[k]
		req := "no"
		if required[k] {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", k, docTypeOf(p), req, oneLine(p.get("description").str()))
	}
	b.WriteString("\n")
}

// docTypeOf describes a member's type for the tables.
func docTypeOf(p *node) string {
	if r := soleRef(p); r != "" {
		return "`" + r + "`"
	}
	if alts := alternatives(p); len(alts) > 0 {
		var parts []string
		for _, a := range alts {
			if r := soleRef(a); r != "" {
				parts = append(parts, "`"+r+"`")
			} else {
				parts = append(parts, typeName(a))
			}
		}
		return strings.Join(parts, " or ")
	}
	t := typeName(p)
	if t == "array" {
		if it := p.get("items"); it != nil {
			return "array of " + docTypeOf(it)
		}
	}
	if nullable(p) {
		t += " or null"
	}
	if t == "" {
		t = "any"
	}
	return t
}

// errorsDoc is the generated table of the error codes: the definition
// ErrorCode (integer consts with titles) and ErrorKind (string consts).
func (s *rpcSchema) errorsDoc() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated by zot-gen from %s (sha256 %s). DO NOT EDIT this section; edit the schema. -->\n\n", s.t.Schema, s.sum[:16])
	kinds := s.defs["ErrorKind"]
	b.WriteString("| `data.kind` | code | retryable | meaning |\n|---|---|---|---|\n")
	for _, a := range alternatives(kinds) {
		c := a.get("const")
		if c == nil {
			continue
		}
		code := string(a.get("x-code").raw)
		retry := "no"
		if string(a.get("x-retryable").raw) == "true" {
			retry = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.str(), code, retry, oneLine(a.get("description").str()))
	}
	b.WriteString("\n")
	return b.String()
}

// firstSentence returns text up to its first blank line, on one line.
func firstSentence(text string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(text), "\n\n")
	return oneLine(para)
}

// oneLine joins text's lines and escapes table pipes.
func oneLine(text string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(text), " "), "|", `\|`)
}

package providertest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// VendorDef is one request type of a vendor's official SDK, transcribed
// for a test that checks zot's request bodies against it.
type VendorDef struct {
	// Type is the literal the member Tag (`type` when empty) must hold,
	// if any; a union's variants are told apart by it.
	Type string
	Tag  string
	// Required are the members the type requires.
	Required []string
	// Members are the members zot may send, each mapped to how its value
	// is checked: "" not further; a definition's or union's name; "[]"
	// and one for an array of them; "str|[]" and one for a string or an
	// array of them; any of these after "?" when null is allowed too. Nil
	// means any member is accepted.
	Members map[string]string
}

// VendorTypes are a vendor's request types: its definitions, and its
// unions, each a list of definitions told apart by their Tag's Type.
type VendorTypes struct {
	Defs   map[string]VendorDef
	Unions map[string][]string
}

// CheckBody decodes body and checks it against the definition root.
func (vt VendorTypes) CheckBody(t testing.TB, name string, body []byte, root string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	vt.Check(t, name, v, root)
}

// Check checks v, found at path, against the definition or union def
// (see VendorDef.Members for its forms): each object has only members
// its type defines, all the ones it requires, and the type it names.
func (vt VendorTypes) Check(t testing.TB, path string, v any, def string) {
	t.Helper()
	if rest, ok := strings.CutPrefix(def, "?"); ok {
		if v == nil {
			return
		}
		def = rest
	}
	if elem, ok := strings.CutPrefix(def, "str|[]"); ok {
		if _, ok := v.(string); ok {
			return
		}
		def = "[]" + elem
	}
	if elem, ok := strings.CutPrefix(def, "[]"); ok {
		arr, ok := v.([]any)
		if !ok {
			t.Errorf("%s: %T, want an array of %s", path, v, elem)
			return
		}
		for _, e := range arr {
			vt.Check(t, path+"[]", e, elem)
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: %T, want an object %s", path, v, def)
		return
	}
	if variants, ok := vt.Unions[def]; ok {
		i := slices.IndexFunc(variants, func(d string) bool { return vt.Defs[d].Type == obj[vt.Defs[d].tag()] })
		if i < 0 {
			t.Errorf("%s: %v is none of %s's variants", path, obj, def)
			return
		}
		def = variants[i]
	}
	d, ok := vt.Defs[def]
	if !ok {
		t.Fatalf("no definition %s", def)
	}
	if d.Type != "" && obj[d.tag()] != d.Type {
		t.Errorf("%s: %s %v, %s wants %q", path, d.tag(), obj[d.tag()], def, d.Type)
	}
	for _, r := range d.Required {
		if _, ok := obj[r]; !ok {
			t.Errorf("%s: %s requires %s", path, def, r)
		}
	}
	if d.Members == nil {
		return
	}
	for k, mv := range obj {
		sub, ok := d.Members[k]
		switch {
		case !ok:
			t.Errorf("%s: %s defines no member %s", path, def, k)
		case sub != "":
			vt.Check(t, path+"."+k, mv, sub)
		}
	}
}

// tag is the member whose literal is d.Type.
func (d VendorDef) tag() string {
	if d.Tag == "" {
		return "type"
	}
	return d.Tag
}

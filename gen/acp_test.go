package gen

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// TestJSONRPCGolden generates a tiny schema in ACP's style and compares
// with testdata/jsonrpc/ (go test ./gen -update rewrites it).
func TestJSONRPCGolden(t *testing.T) {
	schemaData, err := os.ReadFile("testdata/jsonrpc/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("testdata/jsonrpc/doc.md")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"s.json": {Data: schemaData}, "doc.md": {Data: doc}}
	out, err := GenerateJSONRPC(fsys, []JSONRPCTarget{{Name: "tiny", Schema: "s.json", GoFile: "tiny.go", GoPackage: "tiny", Doc: "doc.md", DocMethods: "methods"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "jsonrpc/want_go.txt", out["tiny.go"])
	golden(t, "jsonrpc/want_doc.md", out["doc.md"])
	src := string(out["tiny.go"])
	for _, want := range []string{
		"MethodPing = \"ping\"",
		"Count *int64 `json:\"count,omitempty\"`",    // a number that may be absent is a pointer
		"Shape *Shape `json:\"shape,omitempty\"`",    // so is a union
		"Tags []string `json:\"tags\"`",              // a required array, written as [] when nil
		"Other json.RawMessage",                      // the open variant
		"Square *Square",                             // the variant without a discriminator
		"None *struct{}",                             // a variant with no body
		"CodeParseError Code = -32700",               // integer consts by title
		"type Anything = json.RawMessage",            // any value
		"type Option struct { OptionFields",          // a union's own members, embedded
		"ID string `json:\"id\"`",                    // ... in their own struct
		`return fmt.Errorf("Shape: unknown kind %q"`, // never: the set is open
	} {
		if strings.HasPrefix(want, "return fmt.Errorf(\"Shape: unknown") {
			if strings.Contains(src, want) {
				t.Errorf("the open union Shape refuses unknown kinds")
			}
			continue
		}
		if !strings.Contains(strings.Join(strings.Fields(src), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("generated Go lacks %q", want)
		}
	}
}

// TestJSONRPCRefusesWhatItCannotModel: a discriminated variant with
// members besides its discriminator is an error, not a silent drop.
func TestJSONRPCRefusesWhatItCannotModel(t *testing.T) {
	bad := `{"$defs":{"U":{"oneOf":[{"type":"object","properties":{"t":{"const":"a"},"x":{"type":"string"}},"allOf":[{"$ref":"#/$defs/B"}]}],"discriminator":{"propertyName":"t"}},"B":{"type":"object","properties":{}}}}`
	fsys := fstest.MapFS{"s.json": {Data: []byte(bad)}}
	_, err := GenerateJSONRPC(fsys, []JSONRPCTarget{{Name: "bad", Schema: "s.json", GoFile: "x.go", GoPackage: "x"}})
	if err == nil || !strings.Contains(err.Error(), "members besides") {
		t.Errorf("error %v, want one about the extra member", err)
	}
}

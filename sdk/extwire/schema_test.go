package extwire

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"zot.dev/zot/schema"
)

// defs returns every definition of schema/ext with its examples, whether
// it is a union, and the file it is in.
func defs(t testing.TB) map[string]struct {
	File     string
	Examples []json.RawMessage
	Union    bool
} {
	t.Helper()
	out := map[string]struct {
		File     string
		Examples []json.RawMessage
		Union    bool
	}{}
	names, err := fs.Glob(schema.FS, "ext/*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no ext schema files: %v", err)
	}
	for _, n := range names {
		data, _ := schema.FS.ReadFile(n)
		var doc struct {
			Defs map[string]struct {
				Examples []json.RawMessage `json:"examples"`
				OneOf    []any             `json:"oneOf"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for k, v := range doc.Defs {
			out[k] = struct {
				File     string
				Examples []json.RawMessage
				Union    bool
			}{n, v.Examples, v.OneOf != nil}
		}
	}
	return out
}

// reference compiles the definition with the reference validator.
func reference(t *testing.T, file, def string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	names, _ := fs.Glob(schema.FS, "ext/*.json")
	for _, n := range names {
		data, _ := schema.FS.ReadFile(n)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(schema.BaseURL+n, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(schema.BaseURL + file + "#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var unionDecoders = map[string]func([]byte) (any, error){
	"ExtensionFrame": func(b []byte) (any, error) { return DecodeExtensionFrame(b) },
	"HostFrame":      func(b []byte) (any, error) { return DecodeHostFrame(b) },
	"ToolContent":    func(b []byte) (any, error) { return DecodeToolContent(b) },
}

func normalize(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("normalize %s: %v", data, err)
	}
	return v
}

// TestExamples holds every example of schema/ext to both validators and
// to a decode-encode round trip.
func TestExamples(t *testing.T) {
	all := defs(t)
	if len(all) < 25 {
		t.Fatalf("only %d definitions", len(all))
	}
	for name, d := range all {
		ref := reference(t, d.File, name)
		for i, ex := range d.Examples {
			if err := ValidateDef(name, ex); err != nil {
				t.Errorf("%s example %d: %v", name, i, err)
			}
			doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(ex))
			if err := ref.Validate(doc); err != nil {
				t.Errorf("%s example %d fails the reference validator: %v", name, i, err)
			}
			var v any
			if d.Union {
				var err error
				if v, err = unionDecoders[name](ex); err != nil {
					t.Errorf("%s example %d: %v", name, i, err)
					continue
				}
			} else if v = newByDef(name); v == nil {
				t.Fatalf("no Go type for %s", name)
			} else if err := json.Unmarshal(ex, v); err != nil {
				t.Errorf("%s example %d: %v", name, i, err)
				continue
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalize(t, out), normalize(t, ex)) {
				t.Errorf("%s example %d does not round-trip:\n got %s\nwant %s", name, i, out, ex)
			}
		}
	}
}

// TestBrokenFrames: the generated checks reject what the reference
// validator rejects, with a one-line error naming the place.
func TestBrokenFrames(t *testing.T) {
	for _, c := range []struct {
		def, line, want string
	}{
		{"HelloFrame", `{"type":"hello"}`, `missing property 'name'`},
		{"HelloFrame", `{"type":"hello","name":""}`, "at /name"},
		{"ToolResultFrame", `{"type":"tool_result","id":"1","content":[{"type":"text","text":1}]}`, "at /content/0/text"},
		{"ToolResultFrame", `{"type":"tool_result","id":"1","content":[{"type":"video"}]}`, "at /content/0/type"},
		{"NotifyFrame", `{"type":"notify","level":"loud","message":"m"}`, "at /level"},
		{"CommandResponseFrame", `{"type":"command_response","id":"1","action":"shout"}`, "at /action"},
		{"SubscribeFrame", `{"type":"subscribe","intercept":["turn_end"]}`, "at /intercept/0"},
		{"Manifest", `{"name":"x"}`, `missing property 'exec'`},
		{"Manifest", `{"name":"x","exec":"./x","enabled":"yes"}`, "at /enabled"},
		{"Manifest", `{"name":"x","exec":"./x","exce":"./y"}`, "'exce'"},
		{"PanelKeyFrame", `{"type":"panel_key","panel_id":"p","key":"f13"}`, "at /key"},
	} {
		err := ValidateDef(c.def, []byte(c.line))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: got %v, want one line containing %q", c.def, c.line, err, c.want)
		}
		file := map[bool]string{true: "ext/manifest.json", false: ""}[c.def == "Manifest"]
		if file == "" {
			file = defs(t)[c.def].File
		}
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(c.line))
		if reference(t, file, c.def).Validate(doc) == nil {
			t.Errorf("%s %s: the reference validator accepts it", c.def, c.line)
		}
	}
	if err := ValidateExtensionFrame([]byte(`{"type":"launch"}`)); err == nil {
		t.Error("an unknown frame type validates")
	}
	if err := ValidateHostFrame([]byte(`{"type":"hello_ack"}`)); err == nil {
		t.Error("a hello_ack without fields validates")
	}
}

// TestPanelCloseBothWays: panel_close is a frame of both directions, and
// each union decodes it into its own type.
func TestPanelCloseBothWays(t *testing.T) {
	line := []byte(`{"type":"panel_close","panel_id":"p"}`)
	e, err := DecodeExtensionFrame(line)
	if _, ok := e.(*PanelCloseFrame); !ok || err != nil {
		t.Fatalf("extension side: %T %v", e, err)
	}
	h, err := DecodeHostFrame(line)
	if _, ok := h.(*HostPanelCloseFrame); !ok || err != nil {
		t.Fatalf("host side: %T %v", h, err)
	}
}

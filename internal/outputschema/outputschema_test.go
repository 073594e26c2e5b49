package outputschema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestVerdictsAgreeWithReference holds Check's verdicts to the reference
// validator the protocol's own checks are held to (jsonschema/v6, as
// internal/schemacheck uses it), on schemas of the shapes embedders ask
// for: objects with required fields, enums, arrays, nested objects,
// numbers with bounds, $defs with $ref, and additionalProperties false.
func TestVerdictsAgreeWithReference(t *testing.T) {
	cases := []struct {
		schema  string
		answers []string
	}{
		{`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
			[]string{`{"city":"Paris"}`, `{"city":3}`, `{}`, `[]`, `"Paris"`}},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5}},"additionalProperties":false}`,
			[]string{`{"n":3}`, `{"n":3.5}`, `{"n":9}`, `{"n":2,"m":1}`, `{}`}},
		{`{"type":"array","items":{"enum":["a","b"]},"minItems":1}`,
			[]string{`["a","b"]`, `[]`, `["c"]`, `{"a":1}`}},
		{`{"$defs":{"p":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"type":"object","properties":{"points":{"type":"array","items":{"$ref":"#/$defs/p"}}},"required":["points"]}`,
			[]string{`{"points":[{"x":1},{"x":2.5}]}`, `{"points":[{"y":1}]}`, `{"points":[{"x":"1"}]}`}},
		{`{"anyOf":[{"type":"string"},{"type":"null"}]}`,
			[]string{`"s"`, `null`, `1`}},
		{`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+-[0-9]+$","minLength":3},"n":{"type":"integer","multipleOf":2}},"patternProperties":{"^x-":{"type":"boolean"}},"additionalProperties":{"type":"string"}}`,
			[]string{`{"id":"ab-12","n":4}`, `{"id":"AB-12"}`, `{"n":3}`, `{"n":4.0}`, `{"x-a":true}`, `{"x-a":1}`, `{"other":"s"}`, `{"other":1}`}},
		{`{"oneOf":[{"type":"integer"},{"type":"number","minimum":2}],"not":{"const":7}}`,
			[]string{`1`, `3`, `2.5`, `7`, `"x"`}},
		{`{"type":"array","prefixItems":[{"type":"string"},{"type":"boolean"}],"items":{"type":"integer"},"uniqueItems":true,"contains":{"const":"a"}}`,
			[]string{`["a",true,1,2]`, `["a",true,1,1]`, `["b",true]`, `["a",1]`, `["a",true,"x"]`}},
		{`{"type":["string","integer"],"enum":["a",1,2]}`,
			[]string{`"a"`, `1`, `1.0`, `"b"`, `true`}},
	}
	for _, c := range cases {
		s, err := Compile(json.RawMessage(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		if err := comp.AddResource("mem://s.json", doc); err != nil {
			t.Fatal(err)
		}
		ref, err := comp.Compile("mem://s.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.answers {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(a))
			if err != nil {
				t.Fatal(err)
			}
			want := ref.Validate(inst) == nil
			_, gotErr := s.Check(a)
			if got := gotErr == nil; got != want {
				t.Errorf("schema %s, answer %s: Check says valid=%v (%v), the reference %v", c.schema, a, got, gotErr, want)
			}
		}
	}
}

// TestCheckNamesThePath: a failure names the schema path that failed, so
// the model's corrective turn and the client's error say where.
func TestCheckNamesThePath(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for answer, want := range map[string]string{
		`{"city":3}`:              "/properties/city",
		`{"town":"Lyon"}`:         "required",
		`The capital is Paris.`:   "not JSON",
		`{"city":"Paris"} thanks`: "text follows",
		``:                        "empty",
	} {
		_, err := s.Check(answer)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v; want an error containing %q", answer, err, want)
		}
	}
	v, err := s.Check("```json\n{ \"city\" : \"Paris\" }\n```")
	if err != nil || string(v) != `{"city":"Paris"}` {
		t.Fatalf("a fenced answer: %s, %v", v, err)
	}
	if _, err := Compile(json.RawMessage(`{"type":12}`)); err == nil {
		t.Fatal("a schema with type 12 compiled")
	}
}

// CheckRef checks a value against one definition of a document of many.
func TestCheckRef(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"$defs":{"Id":{"type":"string"},"Req":{"type":"object","properties":{"id":{"$ref":"#/$defs/Id"}},"required":["id"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckRef("#/$defs/Req", []byte(`{"id":"a"}`)); err != nil {
		t.Errorf("a valid value: %v", err)
	}
	if err := s.CheckRef("#/$defs/Req", []byte(`{"id":3}`)); err == nil || !strings.Contains(err.Error(), "/$defs/Id/type") {
		t.Errorf("a wrong type: %v, want the path of the failing definition", err)
	}
	if err := s.CheckRef("#/$defs/Nope", []byte(`{}`)); err == nil {
		t.Error("a reference to nothing passed")
	}
}

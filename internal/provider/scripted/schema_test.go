package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/schema"
	"zot.dev/zot/sdk/wire"
)

// The script format has a JSON Schema, schema/script/script.json, from
// which docs/providers.md's reference is generated. These tests hold Parse
// and the schema to the same verdict on every script, so neither can
// drift. The one rule the schema cannot state, that a key may not appear
// twice in an object, is left out of the comparison.

// schemaAccepts reports whether data is valid under the script schema.
func schemaAccepts(t testing.TB, data []byte) bool {
	t.Helper()
	err := schemacheck.ValidateScript(data)
	var ve *wire.ValidationError
	if err != nil && !errors.As(err, &ve) {
		t.Fatalf("checking against the script schema: %v", err)
	}
	return err == nil
}

// comparable reports whether both verdicts are meaningful for data: it
// is one JSON value and no object in it repeats a key.
func comparable(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: d == '{', keys: map[string]bool{}, key: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top == nil || !top.object {
			continue
		}
		if top.key {
			k := tok.(string)
			if top.keys[k] {
				return false
			}
			top.keys[k] = true
			top.key = false
		} else {
			top.key = true
		}
	}
}

// agree fails when Parse and the schema judge data differently.
func agree(t *testing.T, data []byte) {
	t.Helper()
	if !comparable(data) {
		return
	}
	_, err := Parse(data, "script.json")
	if got := schemaAccepts(t, data); got != (err == nil) {
		t.Errorf("schema accepts=%v but Parse error=%v for\n%s", got, err, data)
	}
}

// agreementCorpus is every script the tests know: valid ones, the
// refused ones of parseErrorCases, the schema's own examples placed in a
// script, and edge cases of the rules that tie fields together.
func agreementCorpus(t testing.TB) (valid, invalid [][]byte) {
	valid = append(valid, []byte(fullScript))
	for _, tc := range parseErrorCases() {
		invalid = append(invalid, []byte(tc.text))
	}
	step := func(s string) []byte { return []byte(`{"turns":[{"steps":[` + s + `]}]}`) }
	examples, err := schema.Examples("script/script.json")
	if err != nil {
		t.Fatal(err)
	}
	wrap := map[string]func(string) []byte{
		"Script":         func(s string) []byte { return []byte(s) },
		"ScriptTurn":     func(s string) []byte { return []byte(`{"turns":[` + s + `]}`) },
		"ScriptStep":     step,
		"ScriptToolCall": func(s string) []byte { return step(`{"tool_calls":[` + s + `]}`) },
		"ScriptUsage":    func(s string) []byte { return step(`{"usage":` + s + `}`) },
		"ScriptFailure":  func(s string) []byte { return step(`{"error":` + s + `}`) },
	}
	for name, exs := range examples {
		w, ok := wrap[name]
		if !ok {
			t.Fatalf("no way to place an example of %s in a script", name)
		}
		for _, ex := range exs {
			valid = append(valid, w(string(ex)))
		}
	}
	for _, s := range []string{
		`{"echo":false,"text":"a"}`,
		`{"echo":true}`,
		`{"cut_after":0,"error":{"status":500}}`,
		`{"error":{"status":500,"after_bytes":0,"times":3}}`,
		`{"chunk":1e2,"delay_ms":600000}`,
		`{"tool_calls":[]}`,
		`{"tool_calls":[{"name":"a","args":{}}],"stop":"end_turn"}`,
		`{"usage":{}}`,
	} {
		valid = append(valid, step(s))
	}
	for _, s := range []string{
		`{"error":{"after_bytes":0}}`,
		`{"error":{"after_bytes":0,"times":1}}`,
		`{"error":{"status":599.5}}`,
		`{"delay_ms":600001}`,
		`{"chunk":2147483648}`,
		`{"cut_after":1,"error":{"after_bytes":1}}`,
		`{"echo":true,"text":""}`,
		`{"stop":"aborted"}`,
		`{"tool_calls":[{"name":"a","args":null}]}`,
		`{"usage":{"input":1.5}}`,
		`{"error":{"times":2}}`,
	} {
		invalid = append(invalid, step(s))
	}
	return valid, invalid
}

func TestScriptSchemaAgreesWithParse(t *testing.T) {
	valid, invalid := agreementCorpus(t)
	for _, data := range valid {
		if _, err := Parse(data, "script.json"); err != nil {
			t.Errorf("a valid script is refused: %v\n%s", err, data)
		}
		if !schemaAccepts(t, data) {
			t.Errorf("the schema refuses a valid script:\n%s", data)
		}
	}
	compared := 0
	for _, data := range invalid {
		if !comparable(data) {
			continue
		}
		compared++
		if _, err := Parse(data, "script.json"); err == nil {
			t.Errorf("Parse accepts an invalid script:\n%s", data)
		}
		if schemaAccepts(t, data) {
			t.Errorf("the schema accepts an invalid script:\n%s", data)
		}
	}
	if compared < 40 {
		t.Errorf("only %d invalid scripts compared", compared)
	}
}

func TestComparable(t *testing.T) {
	for data, want := range map[string]bool{
		`{"a":1,"b":{"a":2}}`:     true,
		`{"a":[{"a":1},{"a":2}]}`: true,
		`{"a":1,"a":2}`:           false,
		`{"x":{"b":[],"b":1}}`:    false,
		`{"a":`:                   false,
	} {
		if got := comparable([]byte(data)); got != want {
			t.Errorf("comparable(%s) = %v", data, got)
		}
	}
}

// FuzzScriptSchemaAgreement mutates the corpus: whatever the input, Parse
// and the schema give the same verdict.
func FuzzScriptSchemaAgreement(f *testing.F) {
	valid, invalid := agreementCorpus(f)
	for _, d := range append(valid, invalid...) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}

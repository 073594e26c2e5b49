package mergepatch

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRFCExamples runs the examples of RFC 7396, appendix A, and the
// example of its section 3.
func TestRFCExamples(t *testing.T) {
	for _, c := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		// Section 3.
		{`{"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},"tags":["example","sample"],"content":"This will be unchanged"}`,
			`{"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},"tags":["example"]}`,
			`{"title":"Hello!","author":{"givenName":"John"},"tags":["example"],"content":"This will be unchanged","phoneNumber":"+01-123-456-7890"}`},
	} {
		got, err := Apply(json.RawMessage(c.target), json.RawMessage(c.patch))
		if err != nil {
			t.Fatalf("%s + %s: %v", c.target, c.patch, err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s + %s = %s, want %s", c.target, c.patch, got, c.want)
		}
	}
}

// TestBadJSON: a patch or target that is not JSON is an error.
func TestBadJSON(t *testing.T) {
	if _, err := Apply(json.RawMessage(`{}`), json.RawMessage(`{`)); err == nil {
		t.Error("a patch that is not JSON was applied")
	}
	if _, err := Apply(json.RawMessage(`{`), json.RawMessage(`{}`)); err == nil {
		t.Error("a target that is not JSON was patched")
	}
}

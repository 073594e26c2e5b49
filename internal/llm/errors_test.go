package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// decodeErr is what encoding/json says decoding in into a struct of the
// kinds tools and providers decode.
func decodeErr(t *testing.T, in string) error {
	t.Helper()
	type edit struct {
		Old string `json:"old"`
	}
	var v struct {
		Path  string            `json:"path"`
		Line  int               `json:"line"`
		Small int8              `json:"small"`
		Count uint              `json:"count"`
		Ratio float64           `json:"ratio"`
		Force *bool             `json:"force"`
		Edits []edit            `json:"edits"`
		Env   map[string]string `json:"env"`
		Data  []byte            `json:"data"`
	}
	err := json.Unmarshal([]byte(in), &v)
	if err == nil {
		t.Fatalf("decoding %s: no error", in)
	}
	return err
}

// TestErrorTextNamesFieldsNotGoTypes: encoding/json's decoding errors
// name Go types and struct names; what clients and the model read names
// the field and the JSON kinds, whether the error is returned as is,
// wrapped, or flattened into text.
func TestErrorTextNamesFieldsNotGoTypes(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"path":5}`, `field "path": expected a string, got a number`},
		{`{"line":"7"}`, `field "line": expected an integer, got a string`},
		{`{"line":1.5}`, `field "line": expected an integer, got the number 1.5`},
		{`{"small":300}`, `field "small": expected an integer from -128 to 127, got the number 300`},
		{`{"count":-1}`, `field "count": expected a non-negative integer, got the number -1`},
		{`{"ratio":[]}`, `field "ratio": expected a number, got an array`},
		{`{"force":"yes"}`, `field "force": expected a boolean, got a string`},
		{`{"edits":{}}`, `field "edits": expected an array, got an object`},
		{`{"edits":[{"old":true}]}`, `field "edits.old": expected a string, got a boolean`},
		{`{"env":{"A":1}}`, `field "env": expected a string, got a number`},
		{`{"data":1}`, `field "data": expected a base64 string, got a number`},
		{`[1]`, `expected an object, got an array`},
	}
	for _, tc := range cases {
		err := decodeErr(t, tc.in)
		for _, e := range []error{
			err,
			fmt.Errorf("decoding arguments: %w", err),
			fmt.Errorf("decoding arguments: %v", err), // only the text is left
			&Error{Provider: "p", Kind: "invalid_event", Message: "decoding chunk: " + err.Error()},
		} {
			got := ErrorText(e)
			if !strings.Contains(got, tc.want) || strings.Contains(got, "Go ") || strings.Contains(got, "json: ") {
				t.Errorf("ErrorText(%q) = %q, want it to contain %q", e, got, tc.want)
			}
			if wrapped := strings.TrimSuffix(e.Error(), err.Error()); wrapped != e.Error() && !strings.HasPrefix(got, wrapped) {
				t.Errorf("ErrorText(%q) = %q lost the context %q", e, got, wrapped)
			}
		}
	}
}

// TestErrorTextKeepsOtherErrors: errors that name no Go type come back as
// they are; a nil error is empty.
func TestErrorTextKeepsOtherErrors(t *testing.T) {
	for _, err := range []error{
		errors.New("open x: no such file or directory"),
		errors.New(`json: unknown field "x"`),
		&json.SyntaxError{},
		&Error{Provider: "anthropic", Status: 529, Kind: "overloaded_error", Message: "Overloaded"},
	} {
		if got := ErrorText(err); got != err.Error() {
			t.Errorf("ErrorText(%q) = %q", err, got)
		}
	}
	if got := ErrorText(nil); got != "" {
		t.Errorf("ErrorText(nil) = %q", got)
	}
}

// TestProviderErrorNamesNoGoTypes: a provider that put a decoding error
// into its message is reported in JSON words.
func TestProviderErrorNamesNoGoTypes(t *testing.T) {
	e := &Error{Provider: "openai", Kind: "invalid_event", Message: "decoding chunk: " + decodeErr(t, `{"path":5}`).Error()}
	const want = `openai: invalid_event: decoding chunk: field "path": expected a string, got a number`
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestErrorTextFromText: messages that only carry encoding/json's text,
// with the types it writes, read in JSON words.
func TestErrorTextFromText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"step 2: json: cannot unmarshal string into Go struct field chunk.choices.delta.tool_calls.index of type int.",
			`step 2: field "choices.delta.tool_calls.index": expected an integer, got a string.`},
		{"json: cannot unmarshal array into Go value of type map[string]interface {}; giving up",
			"expected an object, got an array; giving up"},
		{"a: json: cannot unmarshal number into Go value of type main.Mode\nb: json: cannot unmarshal bool into Go struct field T.x of type []string",
			"a: cannot be a number\nb: field \"x\": expected an array, got a boolean"},
		{"json: cannot unmarshal number 1e400 into Go struct field .size of type float64",
			`field "size": expected a number, got the number 1e400`},
		{"decoding: json: Unmarshal(nil *main.args)", "decoding: " + invalidTargetText},
		{"json: Unmarshal(non-pointer struct { A int \"json:\\\"a)\\\"\" }) failed", invalidTargetText + " failed"},
		{"json: cannot unmarshal into something else", "json: cannot unmarshal into something else"},
		{"json: Unmarshal(nil)", invalidTargetText},
		// Not an invalid-destination message: the type error after it is
		// still reworded, not taken as part of it.
		{"json: Unmarshal(]json: cannot unmarshal number into Go struct field .path of type string",
			`json: Unmarshal(]field "path": expected a string, got a number`},
		{"json: Unmarshal(x) json: cannot unmarshal bool into Go value of type int",
			"json: Unmarshal(x) expected an integer, got a boolean"},
	}
	for _, tc := range cases {
		if got := ErrorText(errors.New(tc.in)); got != tc.want {
			t.Errorf("ErrorText(%q)\n got  %q\n want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzErrorText: any message is reworded without a panic, and the text of
// a real decoding error in it, followed by a separator, names no Go type.
func FuzzErrorText(f *testing.F) {
	f.Add("json: cannot unmarshal number into Go struct field a.b of type string", `{"b":1}`, ": ")
	f.Add("json: Unmarshal((", `[`, "\n")
	f.Add("json: cannot unmarshal number 5 into Go value of type struct { \"", `{"path":[]}`, "; ")
	f.Fuzz(func(t *testing.T, msg, doc, sep string) {
		_ = ErrorText(errors.New(msg))
		var v struct {
			Path string `json:"path"`
			N    []int  `json:"n"`
		}
		err := json.Unmarshal([]byte(doc), &v)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || sep == "" || !strings.ContainsAny(sep[:1], " :;,\n") {
			return
		}
		if got := ErrorText(errors.New(msg + err.Error() + sep)); strings.Contains(got, "into Go ") && !strings.Contains(msg+sep, "into Go ") {
			t.Fatalf("ErrorText(%q) = %q", msg+err.Error()+sep, got)
		}
	})
}

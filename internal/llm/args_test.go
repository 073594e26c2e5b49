package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToolArgs(t *testing.T) {
	cases := []struct{ in, args, errHas string }{
		{"", "{}", ""},
		{"  ", "{}", ""},
		{`{"a":1}`, `{"a":1}`, ""},
		{" { \"a\" : 1 } ", `{ "a" : 1 }`, ""},
		{"{not json", "{}", "not valid JSON"},
		{`{"a":`, "{}", "not valid JSON"},
		{`{"a":1}{"b":2}`, "{}", "not valid JSON"},
		{"[1,2]", "{}", "not a JSON object"},
		{`"str"`, "{}", "not a JSON object"},
		{"7", "{}", "not a JSON object"},
	}
	for _, tc := range cases {
		args, msg := ParseToolArgs([]byte(tc.in))
		if string(args) != tc.args || (tc.errHas == "") != (msg == "") || !strings.Contains(msg, tc.errHas) {
			t.Errorf("ParseToolArgs(%q) = %s, %q", tc.in, args, msg)
		}
		if !json.Valid(args) {
			t.Errorf("ParseToolArgs(%q) args %q are not JSON", tc.in, args)
		}
	}
}

func TestParseToolArgsQuotesLongInputOnARuneBoundary(t *testing.T) {
	long := "[" + strings.Repeat("é", 3000) + "]"
	_, msg := ParseToolArgs([]byte(long))
	if !strings.HasSuffix(msg, "…") || !utf8.ValidString(msg) || len(msg) > 2200 {
		t.Errorf("message of %d bytes: %.80q", len(msg), msg)
	}
}

// TestParseToolArgsRejectsRepeatedNames: a name given twice in one object,
// at any depth, makes the arguments invalid, since decoders disagree on
// which value counts (encoding/json keeps the last) and the call shown to
// clients must be the call that runs.
func TestParseToolArgsRejectsRepeatedNames(t *testing.T) {
	cases := []struct{ in, field string }{
		{`{"path":"a","path":"b"}`, `"path"`},
		{`{"path":"a","n":1,"path":"a"}`, `"path"`},
		{`{"path":"a","p\u0061th":"b"}`, `"path"`},
		{`{"a":{"b":1,"c":{"d":[],"d":null}}}`, `"a.c.d"`},
		{`{"edits":[{"old":"x","new":"y"},{"old":"x","old":"y"}]}`, `"edits[1].old"`},
		{`{"a":[[{"k":1,"k":2}]]}`, `"a[0][0].k"`},
		{"{\"\xff\":1,\"\xfe\":2}", "\"\ufffd\""}, // both decode to U+FFFD
		{`{"\ud800":1,"\udc00":2}`, "\"\ufffd\""}, // so do lone surrogates
	}
	for _, tc := range cases {
		args, msg := ParseToolArgs([]byte(tc.in))
		if string(args) != "{}" || !strings.Contains(msg, "field "+tc.field+" twice") || !strings.Contains(msg, tc.in) {
			t.Errorf("ParseToolArgs(%s) = %s, %q; want {} and a message naming %s", tc.in, args, msg, tc.field)
		}
	}
	for _, ok := range []string{
		`{"a":{"a":{"a":1}}}`,
		`{"a":[{"k":1},{"k":2}]}`,
		`{"path":"a","Path":"b"}`,
		`{"a":1,"a ":2,"\\a":3}`,
		`{"\ud83d\ude00":1,"\ud83d":2,"x":"\ud800\udc00"}`,
		`{"":1e1000,"tiny":-1e-1000}`, // valid JSON, beyond float64
	} {
		if args, msg := ParseToolArgs([]byte(ok)); msg != "" || string(args) != ok {
			t.Errorf("ParseToolArgs(%s) = %s, %q; want it accepted", ok, args, msg)
		}
	}
}

// TestParseToolArgsSyntaxErrorsSayWhere: messages about broken arguments
// say what was wrong and in which field, in JSON words.
func TestParseToolArgsSyntaxErrorsSayWhere(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"path":"a","content":"abc`, `the arguments end inside field "content"`},
		{`{"path":"a",`, `the arguments end inside the object`},
		{`{"a":[1,2,}`, `invalid character '}' at byte 10 in field "a[2]", expected a value`},
		{`{"a":tru}`, `invalid character '}' at byte 8 in field "a", expected true`},
		{`{"a":01}`, `invalid character '1' at byte 6 after field "a", expected ',' or '}'`},
		{"{\"a\":\"x\ty\"}", `unescaped control character U+0009 at byte 7 in field "a"`},
		{`{"a":"\q"}`, `invalid escape \q at byte 6 in field "a"`},
		{`{"a":"\u12x4"}`, `invalid escape \u12x at byte 6 in field "a"`},
		{"{\"a\":\"\\\n\"}", `invalid escape \ followed by '\n' at byte 6 in field "a"`},
		{`{a:1}`, `invalid character 'a' at byte 1, expected a field name in quotes`},
		{`{"a" 1}`, `invalid character '1' at byte 5 after field "a", expected ':'`},
		{`{"a":1 "b":2}`, `invalid character '"' at byte 7 after field "a", expected ',' or '}'`},
		{`{"a":1}x`, `invalid character 'x' at byte 7 after the object`},
	}
	for _, tc := range cases {
		_, msg := ParseToolArgs([]byte(tc.in))
		if !strings.Contains(msg, "not valid JSON") || !strings.Contains(msg, tc.want) {
			t.Errorf("ParseToolArgs(%s): %q, want it to contain %q", tc.in, msg, tc.want)
		}
	}
}

// FuzzParseToolArgs holds ParseToolArgs to encoding/json: it accepts exactly
// the objects json.Valid accepts whose objects have no repeated names (as
// the decoder reads them), and passes them on unchanged.
func FuzzParseToolArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `{"\u0061":1,"a":2}`,
		`{"n":-0.5e+10,"t":true,"f":false,"z":null,"s":"\"\\\/\b\f\n\r\t\u00e9"}`, `[1]`, `"s"`, ` {"a" : [ ] } `,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a":[1,]}`, `{"a":1,}`,
		"{\"\xff\":1,\"\xfe\":2}", `{"\ud800":1,"\udc00":2}`, `{"a":{}}{}`, `{"a":nul}`, `{"a":truee}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, msg := ParseToolArgs(data)
		trimmed := bytes.TrimSpace(data)
		want := len(trimmed) == 0 || json.Valid(trimmed) && trimmed[0] == '{' && !repeatsName(t, trimmed)
		if want != (msg == "") {
			t.Fatalf("ParseToolArgs(%q): message %q, want valid=%v", data, msg, want)
		}
		if msg == "" && len(trimmed) > 0 && !bytes.Equal(args, trimmed) {
			t.Fatalf("ParseToolArgs(%q) = %q, want the input", data, args)
		}
		if msg != "" && string(args) != "{}" {
			t.Fatalf("ParseToolArgs(%q) = %q with message %q", data, args, msg)
		}
	})
}

// repeatsName reports whether an object in the valid JSON data gives a name
// twice, reading names with encoding/json's token decoder. Numbers are
// read as their text (UseNumber): a number JSON allows but float64 cannot
// hold, such as 1e1000, is valid in arguments (testdata/fuzz holds that
// find).
func repeatsName(t *testing.T, data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		names  map[string]bool
		key    bool // the next token of an object is a name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("token decoder on valid JSON %q: %v", data, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if name, ok := tok.(string); ok {
				if top.names[name] {
					return true
				}
				top.names[name] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, names: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a name comes next
		}
	}
}

// benchArgs are tool arguments of the sizes models send: a read, an edit
// with a few lines, a nested multi-edit, and a whole file written.
func benchArgs() map[string][]byte {
	line := `	if err := json.Unmarshal(data, &v); err != nil { return fmt.Errorf("decoding \"%s\": %w", name, err) }` + "\n"
	content, _ := json.Marshal(strings.Repeat(line, 600)) // about 64 KB
	var edits strings.Builder
	edits.WriteString(`{"path":"internal/agent/stream.go","edits":[`)
	for i := range 20 {
		if i > 0 {
			edits.WriteString(",")
		}
		old, _ := json.Marshal(strings.Repeat(line, 3))
		edits.WriteString(`{"old_text":` + string(old) + `,"new_text":` + string(old) + `,"replace_all":false}`)
	}
	edits.WriteString(`]}`)
	return map[string][]byte{
		"read":  []byte(`{"path":"internal/agent/agent.go","offset":120,"limit":200}`),
		"edit":  []byte(`{"path":"internal/llm/args.go","old_text":"` + strings.Repeat(`return json.RawMessage(\"{}\"), \"\"\n\t`, 8) + `","new_text":"x"}`),
		"multi": []byte(edits.String()),
		"write": []byte(`{"path":"internal/llm/big.go","content":` + string(content) + `}`),
	}
}

func BenchmarkParseToolArgs(b *testing.B) {
	cases := benchArgs()
	for _, name := range []string{"read", "edit", "multi", "write"} {
		data := cases[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, msg := ParseToolArgs(data); msg != "" {
					b.Fatal(msg)
				}
			}
		})
	}
}

// TestParseToolArgsDepthAsDecoder: arguments nest as deep as encoding/json
// allows and no deeper.
func TestParseToolArgsDepthAsDecoder(t *testing.T) {
	for _, depth := range []int{9999, 10000, 10001} {
		in := []byte(`{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`)
		_, msg := ParseToolArgs(in)
		if valid := json.Valid(in); valid != (msg == "") {
			t.Errorf("depth %d: json.Valid %v, message %.100q", depth, valid, msg)
		}
	}
}

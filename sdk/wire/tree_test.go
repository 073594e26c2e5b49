package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decoderTree is what decodeTree must agree with: json.Decoder with
// UseNumber.
func decoderTree(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("json.Decoder refuses %q, which json.Valid accepts: %v", data, err)
	}
	return v
}

func TestDecodeTree(t *testing.T) {
	long := strings.Repeat("x", aliasMin)
	for _, in := range []string{
		`null`, `true`, `false`, `0`, `-1.5e+10`, `""`, `"a\nb"`, `"\ud800"`, "\"\xff\"",
		` { "a" : [ 1 , 2 , { } , [ ] ] , "b" : "c" , "a" : null } `,
		`{"k\u0041":"v","":{"":""}}`,
		`["` + long + `","` + long + `\t"]`,
	} {
		got, want := decodeTree([]byte(in)).v, decoderTree(t, []byte(in))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", in, got, want)
		}
	}
}

// TestReadCommandCopiesLongText: the long strings the checks share with
// the line never reach the command, whose text stays as read when the
// caller reuses the line's buffer; a long text with escapes reaches it
// decoded.
func TestReadCommandCopiesLongText(t *testing.T) {
	for _, c := range []struct{ literal, text string }{
		{strings.Repeat("a", 4*aliasMin), strings.Repeat("a", 4*aliasMin)},
		{strings.Repeat("a", longValue), strings.Repeat("a", longValue)},
		{strings.Repeat(`a\n\u00e9`, longValue/8), strings.Repeat("a\né", longValue/8)},
	} {
		line := []byte(`{"type":"prompt","message":"` + c.literal + `","extra":"` + c.literal + `"}`)
		cmd, unknown, err := ReadCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		for i := range line {
			line[i] = 'z'
		}
		if got := cmd.(*PromptCommand).Message; got != c.text {
			t.Fatalf("message of %d bytes changed with the line's buffer, or was decoded wrong: %.40q…", len(c.text), got)
		}
		if len(unknown) != 1 || unknown[0] != "extra" {
			t.Fatalf("unknown = %q", unknown)
		}
		line = []byte(`{"type":"prompt","message":"` + c.literal + `"}`)
		if cmd, _, err = ReadCommand(line); err != nil {
			t.Fatal(err)
		}
		for i := range line {
			line[i] = 'z'
		}
		if got := cmd.(*PromptCommand).Message; got != c.text {
			t.Fatalf("message of %d bytes without unknown members changed with the line's buffer: %.40q…", len(c.text), got)
		}
	}
}

// FuzzDecodeTree: for every valid JSON text, decodeTree gives what
// json.Decoder with UseNumber gives.
func FuzzDecodeTree(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",null,true]}`, `"\u00e9\ud83d\ude00"`, "[\"\xed\xa0\x80\"]", ` 1e5 `, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		want := decoderTree(t, data)
		for _, short := range []bool{false, true} {
			if short {
				defer shortStrings()()
			}
			if got := decodeTree(data).v; !reflect.DeepEqual(got, want) {
				t.Fatalf("%q (every string long: %v): got %#v, want %#v", data, short, got, want)
			}
		}
	})
}

// shortStrings makes every string long for decodeTree (shared with the
// line when it can be, and listed as long) until the function it returns
// is called.
func shortStrings() func() {
	alias, long := aliasMin, longValue
	aliasMin, longValue = 0, 0
	return func() { aliasMin, longValue = alias, long }
}

// FuzzReadCommandLongStrings: a command read with every string taken as
// long (shared with the line or decoded once, then put into the command
// through a stand-in) is the command read the plain way, and so are the
// errors and the members ignored.
func FuzzReadCommandLongStrings(f *testing.F) {
	for _, d := range schemaDefs(f) {
		for _, ex := range d.Examples {
			f.Add([]byte(ex))
		}
	}
	for _, s := range []string{
		`{"type":"prompt","message":"a\nb\u00e9\ud83d\ude00\ud800x","images":[{"data":"eA==","mime_type":"image/png"}]}`,
		`{"type":"prompt","message":"one","message":"two"}`,
		`{"type":"prompt","message":"x","MESSAGE":"y"}`,
		`{"type":"hello","client":{"name":"long \" name"},"token":"t"}`,
		`{"id":"i\u0041","type":"set_model","model":"m"}`,
		"{\"type\":\"prompt\",\"message\":\"\xff\xfe\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		plainCmd, plainUnknown, plainErr := ReadCommand(line)
		restore := shortStrings()
		cmd, unknown, err := ReadCommand(line)
		restore()
		if (err == nil) != (plainErr == nil) || err != nil && err.Error() != plainErr.Error() {
			t.Fatalf("%q: error %v, the plain way %v", line, err, plainErr)
		}
		if err != nil {
			return
		}
		if got, want := string(cmd.AppendJSON(nil)), string(plainCmd.AppendJSON(nil)); got != want || !reflect.DeepEqual(unknown, plainUnknown) {
			t.Fatalf("%q:\n got %s, ignoring %q\nwant %s, ignoring %q", line, got, unknown, want, plainUnknown)
		}
		if !reflect.DeepEqual(cmd, plainCmd) {
			t.Fatalf("%q: got %#v, want %#v", line, cmd, plainCmd)
		}
	})
}

// TestUserMessageSizeHint: the hint of a long user message is at least
// its encoding's length; a short one gives none.
func TestUserMessageSizeHint(t *testing.T) {
	long := strings.Repeat("a\n<é\u2028\x01", hintFrom/4)
	for _, e := range []*UserMessageEvent{
		{Seq: 1, PromptID: StringID("p-1"), Content: ContentBlocks{&TextBlock{Text: long}, &ImageBlock{MIMEType: "image/png", Bytes: 10}, &TextBlock{Text: long}}},
		{Seq: 2, Content: ContentBlocks{&TextBlock{Text: long}}},
	} {
		if n, enc := e.SizeHint(), len(e.AppendJSON(nil)); n < enc {
			t.Errorf("hint %d for an encoding of %d bytes", n, enc)
		}
	}
	if n := (&UserMessageEvent{Content: ContentBlocks{&TextBlock{Text: "hi"}}}).SizeHint(); n != 0 {
		t.Errorf("hint %d for a short message", n)
	}
}

// trimmed decodes itself (changing the text), so eachString must not
// hand a stand-in found in it to the caller.
type trimmed string

func (t *trimmed) UnmarshalJSON(b []byte) error {
	var s string
	err := json.Unmarshal(b, &s)
	*t = trimmed(strings.TrimSpace(s))
	return err
}

// TestEachStringSkipsTypesThatDecodeThemselves: plain strings at any depth
// are visited; raw JSON, maps, unexported fields and values of types with
// a decoder of their own are not.
func TestEachStringSkipsTypesThatDecodeThemselves(t *testing.T) {
	type inner struct{ S string }
	v := &struct {
		A      string
		P      *string
		L      []inner
		Own    trimmed
		OwnL   []trimmed
		Raw    json.RawMessage
		M      map[string]string
		hidden string
	}{A: "a", P: new(string), L: []inner{{"l0"}, {"l1"}}, Own: "own", OwnL: []trimmed{"o"}, Raw: json.RawMessage(`"r"`), M: map[string]string{"k": "m"}, hidden: "h"}
	*v.P = "p"
	var seen []string
	eachString(reflect.ValueOf(v), func(s reflect.Value) { seen = append(seen, s.String()) })
	if want := []string{"a", "p", "l0", "l1"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("visited %q, want %q", seen, want)
	}
}

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
		got, want := decodeTree([]byte(in)), decoderTree(t, []byte(in))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", in, got, want)
		}
	}
}

// TestReadCommandCopiesLongText: the long strings the checks share with
// the line never reach the command, whose text stays as read when the
// caller reuses the line's buffer.
func TestReadCommandCopiesLongText(t *testing.T) {
	text := strings.Repeat("a", 4*aliasMin)
	line := []byte(`{"type":"prompt","message":"` + text + `","extra":"` + text + `"}`)
	cmd, unknown, err := ReadCommand(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'z'
	}
	if got := cmd.(*PromptCommand).Message; got != text {
		t.Fatalf("message changed with the line's buffer: %.40q…", got)
	}
	if len(unknown) != 1 || unknown[0] != "extra" {
		t.Fatalf("unknown = %q", unknown)
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
		if got, want := decodeTree(data), decoderTree(t, data); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v, want %#v", data, got, want)
		}
	})
}

package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestMember(t *testing.T) {
	for _, c := range []struct {
		doc, name, want string
		err             bool
	}{
		{`{"a":1,"b":[1,{"c":"}"}],"c":"x"}`, "c", `"x"`, false},
		{` { "a" : { "c" : 2 } , "c" : null } `, "c", `null`, false},
		{`{"a":"\"c\":1","b":2}`, "c", ``, false},
		{`{}`, "a", ``, false},
		{`{"a":1}`, "b", ``, false},
		{`{"\u0063":1}`, "c", `1`, false},
		{`{"c":1,"c":2}`, "c", `1`, false},
		{`[1]`, "a", ``, true},
		{`{"a":[1,2}`, "b", ``, true},
		{`{"a" 1}`, "a", ``, true},
		{`{"a":1 "b":2}`, "b", ``, true},
		{`{"a":"open`, "a", ``, true},
		{``, "a", ``, true},
	} {
		got, err := Member([]byte(c.doc), c.name)
		if c.err {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("Member(%s, %q): err %v, want ErrSyntax", c.doc, c.name, err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("Member(%s, %q) = %q, %v; want %q", c.doc, c.name, got, err, c.want)
		}
	}
}

func TestElements(t *testing.T) {
	got, err := Elements([]byte(` [ 1 , "a,]" , {"b":[2,3]} , [] , null ] `))
	want := []string{`1`, `"a,]"`, `{"b":[2,3]}`, `[]`, `null`}
	if err != nil || len(got) != len(want) {
		t.Fatalf("Elements = %q, %v", got, err)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("element %d = %s, want %s", i, got[i], want[i])
		}
	}
	if got, err := Elements([]byte(`[]`)); err != nil || len(got) != 0 {
		t.Errorf("Elements([]) = %q, %v", got, err)
	}
	for _, bad := range []string{`{}`, `[1,`, `[1 2]`, `["a]`, `[`} {
		if _, err := Elements([]byte(bad)); !errors.Is(err, ErrSyntax) {
			t.Errorf("Elements(%s): err %v, want ErrSyntax", bad, err)
		}
	}
}

// FuzzAgreesWithDecoder holds Member and Elements to encoding/json on
// valid documents: the member found decodes to what a full decode gives,
// and the elements decode to the array's values.
func FuzzAgreesWithDecoder(f *testing.F) {
	for _, s := range []string{
		`{"type":"x","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"a\"b"}]}]}`,
		`{"messages":[]}`, `{"a":{"messages":1},"messages":[1,2.5e3,true,null,"\\"]}`, `[1,[2],{"3":4}]`,
		`{"mess\u0061ges":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		// null decodes into a map and a slice as nil, but it is neither
		// an object nor an array: Member and Elements refuse it.
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) == nil && obj != nil {
			got, err := Member(data, "messages")
			if err != nil {
				t.Fatalf("Member on valid JSON: %v", err)
			}
			want, ok := firstMember(data, "messages")
			if ok != (got != nil) || ok && !bytes.Equal(compact(t, got), compact(t, want)) {
				t.Fatalf("Member = %s, decoder saw %s (present %v)", got, want, ok)
			}
		}
		var arr []json.RawMessage
		if json.Unmarshal(data, &arr) == nil && arr != nil {
			got, err := Elements(data)
			if err != nil || len(got) != len(arr) {
				t.Fatalf("Elements = %d elements, %v; decoder saw %d", len(got), err, len(arr))
			}
			for i := range arr {
				if !bytes.Equal(compact(t, got[i]), compact(t, arr[i])) {
					t.Fatalf("element %d = %s, decoder saw %s", i, got[i], arr[i])
				}
			}
		}
	})
}

// firstMember is the first member called name, as the decoder's token
// stream reads it (a full decode keeps the last of repeated names; Member
// gives the first).
func firstMember(data []byte, name string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if tok == name {
			return v, true
		}
	}
	return nil, false
}

func compact(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compacting %s: %v", b, err)
	}
	return buf.Bytes()
}

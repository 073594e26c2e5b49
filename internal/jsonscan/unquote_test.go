package jsonscan

import (
	"encoding/json"
	"testing"
)

// Unquote reads what encoding/json reads, or declines.
func TestUnquote(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"plain"`, "plain", true},
		{`"é 😀"`, "é 😀", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u00e9\u2028"`, "é\u2028", true},
		{`"\ud83d\ude00"`, "", false}, // surrogates: left to the decoder
		{`"\x"`, "", false},
		{"\"tab\tin\"", "", false},
		{"\"\xff\"", "", false},
		{`"open`, "", false},
		{`"\u12"`, "", false},
		{`x`, "", false},
	} {
		got, end, ok := Unquote([]byte(c.in), 0)
		if ok != c.ok || got != c.want || (ok && end != len(c.in)) {
			t.Errorf("Unquote(%q) = %q, %d, %v; want %q, %v", c.in, got, end, ok, c.want, c.ok)
		}
	}
}

// Whatever Unquote accepts, encoding/json decodes to the same text.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b"`, `"\u00e9"`, `"\ud83d\ude00"`, "\"\xff\"", `"\n"`, `"x" tail`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, end, ok := Unquote(data, 0)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(data[:end], &want); err != nil {
			t.Fatalf("Unquote accepted %q, encoding/json refuses it: %v", data[:end], err)
		}
		if got != want {
			t.Fatalf("Unquote(%q) = %q, encoding/json reads %q", data[:end], got, want)
		}
	})
}

package llm

import (
	"encoding/json"
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

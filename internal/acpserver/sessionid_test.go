package acpserver

import (
	"strings"
	"testing"
)

func TestValidSessionID(t *testing.T) {
	cases := map[string]bool{
		"a":                      true,
		"Z9":                     true,
		"0-_x":                   true,
		"s_0123456789abcdef":     true,
		strings.Repeat("a", 128): true,
		strings.Repeat("a", 129): false,
		"":                       false,
		"-a":                     false,
		"_a":                     false,
		"a/b":                    false,
		"../x":                   false,
		"a.b":                    false,
		"a b":                    false,
		"é":                      false,
		"a\x00":                  false,
	}
	for id, want := range cases {
		if got := validSessionID(id); got != want {
			t.Errorf("validSessionID(%q) = %v, want %v", id, got, want)
		}
	}
}

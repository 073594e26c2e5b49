package acpserver

import (
	"strings"
	"testing"
)

func TestTitleOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  hello\nworld", "hello"},
		{strings.Repeat("é", 80), strings.Repeat("é", 80)},
		{strings.Repeat("é", 81), strings.Repeat("é", 79) + "…"},
		{strings.Repeat("a", 78) + " " + strings.Repeat("b", 10), strings.Repeat("a", 78) + "…"},
	} {
		if got := titleOf(c.in); got != c.want {
			t.Errorf("titleOf(%.20q…) = %q, want %q", c.in, got, c.want)
		}
	}
}

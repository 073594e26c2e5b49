package engine

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidToolName holds the hand-written check to the rule it replaced,
// `^[A-Za-z0-9_-]{1,64}$`, on names at its edges and on every byte.
func TestValidToolName(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	names := []string{"", "a", "lookup", "get_weather", "Z-9", "has space", "dot.ted", "é", "a\n", "\na", "x/y",
		strings.Repeat("a", 63), strings.Repeat("b", 64), strings.Repeat("c", 65), strings.Repeat("é", 10)}
	for b := 0; b < 256; b++ {
		names = append(names, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for _, n := range names {
		if got, want := validToolName(n), rule.MatchString(n); got != want {
			t.Errorf("validToolName(%q) = %v, want %v", n, got, want)
		}
	}
}

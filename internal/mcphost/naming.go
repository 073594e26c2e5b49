package mcphost

import (
	"strconv"
	"strings"
)

// MaxToolName is the longest tool name every provider accepts.
const MaxToolName = 64

// sanitize keeps the characters every provider accepts in a tool name
// ([A-Za-z0-9_-]) and turns every other one into '_'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolName is the name the model sees for tool of server:
// mcp__<server>__<tool>, sanitised and cut to MaxToolName characters.
func ToolName(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) > MaxToolName {
		name = name[:MaxToolName]
	}
	return name
}

// withSuffix returns name with the suffix _<n>, cut so that the whole
// stays within MaxToolName.
func withSuffix(name string, n int) string {
	suffix := "_" + strconv.Itoa(n)
	if len(name)+len(suffix) > MaxToolName {
		name = name[:MaxToolName-len(suffix)]
	}
	return name + suffix
}

// assignNames gives each tool a unique name, in order: the first to ask
// for a name keeps it, a later one gets the first free _2, _3, …
// suffix. taken holds the names already given (and is updated); renamed
// is told of every tool that did not get its plain name.
func assignNames(want []string, taken map[string]bool, renamed func(want, got string)) []string {
	out := make([]string, len(want))
	for i, w := range want {
		got := w
		for n := 2; taken[got]; n++ {
			got = withSuffix(w, n)
		}
		taken[got] = true
		if got != w && renamed != nil {
			renamed(w, got)
		}
		out[i] = got
	}
	return out
}

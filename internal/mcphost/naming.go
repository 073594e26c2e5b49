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

// minServerPart is how much of a long server name a tool name keeps at
// least when the tool's own name is long too.
const minServerPart = 16

// ToolName is the name the model sees for tool of server:
// mcp__<server>__<tool>, sanitised and cut to MaxToolName characters. A
// name too long is cut in the server part first (down to minServerPart
// characters), so that the tools of a server with a long name keep names
// that tell them apart, then at the end.
func ToolName(server, tool string) string {
	srv, tl := sanitize(server), sanitize(tool)
	if room := MaxToolName - len("mcp____"); len(srv)+len(tl) > room {
		keep := max(room-len(tl), min(len(srv), minServerPart))
		srv = srv[:min(len(srv), keep)]
	}
	name := "mcp__" + srv + "__" + tl
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

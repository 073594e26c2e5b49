package tools

import (
	"fmt"
	"strings"
)

// Select picks tools from all by name. With names nil and none false it
// returns all of them; with none true it returns no tools; otherwise it
// returns the named tools in the order they have in all. Unknown names are
// an error that lists the known ones.
func Select(all []Tool, names []string, none bool) ([]Tool, error) {
	if none {
		if len(names) > 0 {
			return nil, fmt.Errorf("selecting tools: no tools requested, yet tools named: %s", strings.Join(names, ", "))
		}
		return []Tool{}, nil
	}
	if names == nil {
		return append([]Tool(nil), all...), nil
	}
	known := make(map[string]bool, len(all))
	for _, t := range all {
		known[t.Name()] = true
	}
	want := make(map[string]bool, len(names))
	var unknown []string
	for _, n := range names {
		if !known[n] {
			unknown = append(unknown, fmt.Sprintf("%q", n))
			continue
		}
		want[n] = true
	}
	if len(unknown) > 0 {
		list := make([]string, 0, len(all))
		for _, t := range all {
			list = append(list, t.Name())
		}
		return nil, fmt.Errorf("selecting tools: unknown tool %s (known: %s)",
			strings.Join(unknown, ", "), strings.Join(list, ", "))
	}
	out := make([]Tool, 0, len(want))
	for _, t := range all {
		if want[t.Name()] {
			out = append(out, t)
		}
	}
	return out, nil
}

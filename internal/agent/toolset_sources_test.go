package agent

import (
	"testing"

	"zot.dev/zot/internal/tools"
)

// Names that move from one source to another in one SetSources are no
// conflict; dropped sources go, the built-ins stay.
func TestSetSourcesMovesNamesAtOnce(t *testing.T) {
	var conflicts []string
	set, err := NewToolSet(toolList(&countingTool{name: "read"}), func(name, kept, dropped string) {
		conflicts = append(conflicts, name+" "+kept+" "+dropped)
	})
	if err != nil {
		t.Fatal(err)
	}
	set.Set("y", []tools.Tool{&countingTool{name: "x"}})
	set.Set("gone", []tools.Tool{&countingTool{name: "g"}})
	// x moves from y to a new source a, y takes x_2, gone is dropped.
	set.SetSources([]SourceTools{
		{Source: "a", Tools: []tools.Tool{&countingTool{name: "x"}}},
		{Source: "y", Tools: []tools.Tool{&countingTool{name: "x_2"}, nil}},
	}, []string{"gone", BuiltinSource})
	if len(conflicts) != 0 {
		t.Fatalf("conflicts reported: %v", conflicts)
	}
	if got := set.View().Names(); got != "read, x, x_2" {
		t.Fatalf("names = %q", got)
	}
	// A real conflict is still reported.
	set.SetSources([]SourceTools{{Source: "b", Tools: []tools.Tool{&countingTool{name: "x"}}}}, nil)
	if len(conflicts) != 1 {
		t.Fatalf("conflicts = %v", conflicts)
	}
}

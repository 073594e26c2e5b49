package fleet

import (
	"testing"

	"zot.dev/zot/internal/tools"
)

// TestBuiltinNames holds the tools a worker runs to zot's built-in ones.
func TestBuiltinNames(t *testing.T) {
	all := tools.Builtins(tools.Config{CWD: t.TempDir()})
	if len(all) != len(builtin) {
		t.Errorf("%d built-in tools, the fleet names %d", len(all), len(builtin))
	}
	for _, tool := range all {
		if !builtin[tool.Name()] {
			t.Errorf("built-in tool %s is not among those a worker runs", tool.Name())
		}
	}
}

package agent

import (
	"sync/atomic"
	"testing"
)

// describedTool is a tool whose description follows a setting.
type describedTool struct {
	countingTool
	desc atomic.Value // string
}

func (d *describedTool) Description() string { return d.desc.Load().(string) }

// Refresh offers a changed description from then on, keeps the snapshot
// (and so the system prompt built from it) when nothing changed, and
// reports no conflict again.
func TestRefreshTakesDescriptionsAgain(t *testing.T) {
	bash := &describedTool{countingTool: countingTool{name: "bash"}}
	bash.desc.Store("sandboxed")
	conflicts := 0
	set, err := NewToolSet(toolList(bash, &countingTool{name: "read"}), func(string, string, string) { conflicts++ })
	if err != nil {
		t.Fatal(err)
	}
	set.Set("ext", toolList(&countingTool{name: "read"})) // a conflict, reported once
	before := set.View()
	set.Refresh()
	if set.View() != before {
		t.Error("a refresh with no change made a new snapshot")
	}
	bash.desc.Store("not sandboxed")
	set.Refresh()
	v := set.View()
	if v == before || v.Specs()[0].Description != "not sandboxed" || before.Specs()[0].Description != "sandboxed" {
		t.Errorf("after the change: %+v (before %+v)", v.Specs(), before.Specs())
	}
	if v.Names() != "bash, read" || v.Source("read") != BuiltinSource {
		t.Errorf("tools %s, read from %s", v.Names(), v.Source("read"))
	}
	if conflicts != 1 {
		t.Errorf("%d conflicts reported, want 1", conflicts)
	}
}

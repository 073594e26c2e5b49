package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMeet: a session's policy confined by a machine's floor never lets
// the tools do more than either lets them.
func TestMeet(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	cache := filepath.Join(dir, "cache")
	sub := filepath.Join(work, "sub")
	other := filepath.Join(dir, "other")
	for _, d := range []string{work, cache, sub, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ws := func(network bool, writable ...string) Policy {
		return Policy{Mode: WorkspaceWrite, Network: network, Workspace: work, Writable: writable}
	}
	full := Policy{Mode: Full, Network: true, Workspace: work}
	for _, c := range []struct {
		name        string
		p, floor    Policy
		mode        Mode
		network     bool
		roots       []string
		writes, not []string
	}{
		{name: "no floor", p: ws(false, cache), floor: Policy{Mode: Off, Network: true},
			mode: WorkspaceWrite, roots: []string{work, cache}, writes: []string{filepath.Join(cache, "f")}, not: []string{filepath.Join(other, "f")}},
		{name: "floor confines a full session", p: full, floor: ws(false, cache),
			mode: WorkspaceWrite, roots: []string{work, cache}, not: []string{filepath.Join(other, "f")}},
		{name: "the session's extra paths outside the floor's are dropped", p: ws(true, cache, other, sub), floor: ws(true, cache),
			mode: WorkspaceWrite, network: true, roots: []string{work, cache, sub}, not: []string{filepath.Join(other, "f")}},
		{name: "read-only floor", p: ws(true, cache), floor: Policy{Mode: ReadOnly, Network: true},
			mode: ReadOnly, network: true, not: []string{filepath.Join(work, "f")}},
		{name: "read-only session under a workspace-write floor", p: Policy{Mode: ReadOnly, Network: true, Workspace: work}, floor: ws(true),
			mode: ReadOnly, network: true, not: []string{filepath.Join(work, "f")}},
		{name: "network off on the floor", p: full, floor: Policy{Mode: Full, Network: false},
			mode: Full, network: false, writes: []string{filepath.Join(other, "f")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.p.Meet(c.floor)
			if got.Mode != c.mode || got.Network != c.network {
				t.Errorf("mode %s, network %v; want %s, %v", got.Mode, got.Network, c.mode, c.network)
			}
			roots := got.WritableRoots()
			var want []string
			for _, r := range c.roots {
				real, _ := filepath.EvalSymlinks(r)
				want = append(want, real)
			}
			slices.Sort(roots)
			slices.Sort(want)
			if !slices.Equal(roots, want) {
				t.Errorf("writable roots %v, want %v", roots, want)
			}
			for _, w := range c.writes {
				if err := got.CheckWrite(w); err != nil {
					t.Errorf("writing %s refused: %v", w, err)
				}
			}
			for _, w := range c.not {
				if got.CheckWrite(w) == nil {
					t.Errorf("writing %s allowed", w)
				}
			}
		})
	}
}

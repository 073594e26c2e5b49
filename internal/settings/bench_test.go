package settings

import (
	"os"
	"path/filepath"
	"testing"
)

// benchRules is a session's rules with a config.json of a few rules and
// a project file, as a call sees them.
func benchRules(b *testing.B) *Rules {
	home, dir := b.TempDir(), b.TempDir()
	os.WriteFile(ConfigFile(home), []byte(`{"model":"m","permissions":{"allow":["bash(go test *)","bash(make *)","read"],"deny":["bash(rm *)","read(.env)"]}}`), 0o600)
	os.MkdirAll(filepath.Join(dir, ".zot"), 0o755)
	os.WriteFile(filepath.Join(dir, ProjectFile), []byte(`{"permissions":{"deny":["bash(git push *)"]}}`), 0o644)
	return &Rules{Home: home, Dir: dir, Project: true}
}

// BenchmarkDecide is what the rules add to one tool call whose files
// did not change: two stats and the matching.
func BenchmarkDecide(b *testing.B) {
	r := benchRules(b)
	args := bash("go test ./... && make lint")
	for b.Loop() {
		if v := r.Decide("bash", args); !v.Allow {
			b.Fatal(v)
		}
	}
}

// BenchmarkLoad is what a session's start pays: reading both files.
func BenchmarkLoad(b *testing.B) {
	r := benchRules(b)
	for b.Loop() {
		r.user.stat, r.proj.stat = "", ""
		r.Load()
	}
}

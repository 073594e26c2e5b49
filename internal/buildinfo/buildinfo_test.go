package buildinfo

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	const rev = "33bc8ad5e975aaaabbbbccccddddeeeeffff0000"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	main := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: version}, Settings: settings}
	}
	for _, tc := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            Info
	}{
		{"stamped by make", "1.2.3-4-g33bc8ad5e975", rev, main("(devel)", nil), Info{"1.2.3-4-g33bc8ad5e975", rev}},
		{"stamped version, commit from vcs", "1.2.3", "", main("(devel)", vcs("false")), Info{"1.2.3", rev}},
		{"go install at a release", unstamped, "", main("v1.4.0", nil), Info{"1.4.0", "unknown"}},
		{"go install at a commit", unstamped, "", main("v0.0.0-20261123174300-33bc8ad5e975", nil), Info{"0.0.0-dev+33bc8ad5e975", "33bc8ad5e975"}},
		{"go install after a release", unstamped, "", main("v1.4.1-0.20261123174300-33bc8ad5e975", nil), Info{"0.0.0-dev+33bc8ad5e975", "33bc8ad5e975"}},
		{"go build in a clone without tags", unstamped, "", main("v0.0.0-20261123174300-33bc8ad5e975+dirty", vcs("true")), Info{"0.0.0-dev+33bc8ad5e975-dirty", rev}},
		{"go build in a clean clone, no module version", unstamped, "", main("(devel)", vcs("false")), Info{"0.0.0-dev+33bc8ad5e975", rev}},
		{"go build at a tag", unstamped, "", main("v1.4.0", vcs("false")), Info{"1.4.0", rev}},
		{"no vcs stamp (-buildvcs=false)", unstamped, "", main("(devel)", nil), Info{"0.0.0-dev", "unknown"}},
		{"no build info", unstamped, "", nil, Info{"0.0.0-dev", "unknown"}},
		{"a dependency of an embedder", unstamped, "", &debug.BuildInfo{
			Main:     debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps:     []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.38.0"}, {Path: modulePath, Version: "v1.4.0"}},
			Settings: vcs("false"),
		}, Info{"1.4.0", "unknown"}},
		{"a replaced dependency", unstamped, "", &debug.BuildInfo{
			Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.4.0", Replace: &debug.Module{Path: "../zot", Version: ""}}},
		}, Info{"0.0.0-dev", "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve(tc.version, tc.commit, tc.bi); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestLeaf: buildinfo imports nothing of zot, so any package (the engine,
// a door, the SDK) can ask for the version without an import cycle.
func TestLeaf(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(path, modulePath+"/") {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

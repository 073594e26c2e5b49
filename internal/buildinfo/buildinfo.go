// Package buildinfo says which build of zot is running: the version and
// commit `make build` and `make install` stamp in with -ldflags, or else
// what the Go toolchain recorded in the binary (the module version of a
// `go install zot.dev/zot/cmd/zot@v1.2.3`, or the commit of a build in a
// clone).
//
// The Makefile sets two variables:
//
//	-X zot.dev/zot/internal/buildinfo.Stamp=1.2.3
//	-X zot.dev/zot/internal/buildinfo.Commit=<full commit hash>
//
// Read the version through [Version], never Stamp directly: only Version
// knows what an unstamped build is. The package imports nothing of zot,
// so every package may ask it.
package buildinfo

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
)

// Stamp is the version zot was built as, stamped by the Makefile; a
// binary still holding its value in the source was built without the
// Makefile's -ldflags.
var Stamp = unstamped

// Commit is the commit zot was built from, stamped by the Makefile.
var Commit string

// unstamped is Stamp as written in the source.
const unstamped = "0.1.0-dev"

// modulePath is zot's module, looked up among the binary's modules when
// zot is a dependency of the program (an embedder linking the SDK).
const modulePath = "zot.dev/zot"

// Info is what one build of zot is.
type Info struct {
	// Version is a semantic version without a leading "v": a release
	// (1.2.3), `git describe` output after a release (1.2.3-4-gabcdef),
	// or 0.0.0-dev+<commit> for a build from no release at all.
	Version string
	// Commit is the commit hash, or "unknown".
	Commit string
}

var (
	once   sync.Once
	cached Info
)

// Get returns the running binary's build information.
func Get() Info {
	once.Do(func() {
		// A build stamped with both (make build, make install) needs
		// nothing of the build information, whose reading parses it all.
		if Stamp != unstamped && Stamp != "" && Commit != "" {
			cached = Info{Version: Stamp, Commit: Commit}
			return
		}
		bi, _ := debug.ReadBuildInfo()
		cached = resolve(Stamp, Commit, bi)
	})
	return cached
}

// Version returns the running binary's version (see [Info.Version]).
func Version() string { return Get().Version }

// resolve works out the build information from the stamped variables and
// the toolchain's record (bi may be nil). A stamp wins; then a release
// version of zot's module; then the commit the toolchain saw.
func resolve(version, commit string, bi *debug.BuildInfo) Info {
	mod, rev, dirty := toolchain(bi)
	info := Info{Version: version, Commit: commit}
	if info.Commit == "" {
		info.Commit = rev
	}
	if info.Version == unstamped || info.Version == "" {
		switch {
		case mod != "" && mod != "(devel)" && !pseudo().MatchString(mod):
			info.Version = strings.TrimPrefix(mod, "v")
		case info.Commit != "":
			info.Version = "0.0.0-dev+" + short(info.Commit)
			if dirty {
				info.Version += "-dirty"
			}
		default:
			info.Version = "0.0.0-dev"
		}
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// toolchain returns what the Go toolchain recorded about zot's module:
// its version, the commit (from the VCS stamp of a build in a clone, or
// the hash in a pseudo-version) and whether the tree had changes.
func toolchain(bi *debug.BuildInfo) (version, commit string, dirty bool) {
	if bi == nil {
		return "", "", false
	}
	mod := &bi.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				mod = d
				if d.Replace != nil {
					mod = d.Replace
				}
				break
			}
		}
		if mod == nil {
			return "", "", false
		}
	} else {
		// The VCS stamp describes the main module only.
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	version = mod.Version
	if m := pseudo().FindStringSubmatch(version); m != nil {
		if commit == "" {
			commit = m[1]
		}
		dirty = dirty || strings.HasSuffix(version, "+dirty")
	}
	return version, commit, dirty
}

// pseudo matches a Go pseudo-version (a build of a commit, not of a
// release) and captures its commit hash prefix.
var pseudo = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v[0-9]+\.(?:0\.0-|[0-9]+\.[0-9]+-(?:[^+]*\.)?0\.)[0-9]{14}-([0-9a-f]{12,})(?:\+[0-9A-Za-z.-]+)?$`)
})

// short abbreviates a commit hash to 12 digits, as `git describe
// --abbrev=12` does.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

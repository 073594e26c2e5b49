package main

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/inittrace"
	"zot.dev/zot/internal/zotbin"
)

// initBudget bounds what the package inits of zot allocate together at
// every start, whatever the command: Go runs the init of every package
// linked into the binary before main, so `zot rpc` pays for what any
// other command links. The heap they allocate is the same from run to
// run (unlike their time, which this test never looks at). zot rpc's
// inits allocated 205 KiB when this budget was set (most of it the MCP
// SDK's dependencies); the rest is room for the terminal client's light
// parts (bubbletea, lipgloss and bubbles add about 100 KiB).
// docs/performance.md tells how to read the trace.
const initBudget = 384 << 10

// heavyInits are packages whose inits do work that zot cannot afford at
// every start (measured with go1.26): chroma's lexer and style registries
// parse every embedded XML definition (2.7 MiB and 1.9 MiB, 10–20 ms),
// glamour links both, goldmark builds its entity and parser tables
// (0.3–0.6 MiB), bluemonday and gorilla/css compile their sanitizer's
// expressions (1 MiB). A package of this list, or under it, that
// allocates in its init fails the test: a terminal client renders
// Markdown and highlights code without them, or builds what it needs on
// first use.
var heavyInits = []string{
	"github.com/alecthomas/chroma/v2/lexers",
	"github.com/alecthomas/chroma/v2/styles",
	"github.com/alecthomas/chroma/lexers",
	"github.com/alecthomas/chroma/styles",
	"charm.land/glamour",
	"github.com/charmbracelet/glamour",
	"github.com/yuin/goldmark",
	"github.com/microcosm-cc/bluemonday",
	"github.com/gorilla/css",
}

// noInits are zot's packages that zot rpc never runs: the other doors,
// the traffic tap and its inspector (on only when asked) and the
// terminal client, the session files and the undo records it
// opens only when asked, the MCP client when no server is configured. None of them may have package initialisation at
// all: the kernel maps a binary 64 KiB around each page it touches, so an
// init of a few bytes makes a block of code that rpc never runs resident
// in every zot process (a package-level map, regexp or value copied from
// another package's variable is built by an init; constants, composite
// literals of constants and errors.New are not).
var noInits = []string{
	"zot.dev/zot/internal/tui",
	"zot.dev/zot/internal/acpserver",
	"zot.dev/zot/internal/acp",
	"zot.dev/zot/internal/daemon",
	"zot.dev/zot/internal/jsonrpc",
	"zot.dev/zot/internal/sessionfile",
	"zot.dev/zot/internal/checkpoint",
	"zot.dev/zot/internal/store",
	"zot.dev/zot/internal/mcpclient",
	"zot.dev/zot/internal/wsserve",
	"zot.dev/zot/internal/inspect",
	"zot.dev/zot/internal/tap",
}

// TestStartInitsWithinBudget: zot rpc, started with
// GODEBUG=inittrace=1, answers a ping, and the package inits it ran
// before main allocated at most initBudget bytes together, none of them
// in a heavy package, and none ran in the packages of noInits.
func TestStartInitsWithinBudget(t *testing.T) {
	bin := productBinary(t)
	cmd := exec.Command(bin, "rpc", "--provider", "scripted")
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+t.TempDir(), "GODEBUG=inittrace=1")
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(`{"type":"ping","id":"p"}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot rpc: %v\n%s", err, stderr.String())
	}
	if first, _, _ := bytes.Cut(out, []byte("\n")); !bytes.Contains(first, []byte(`"success":true`)) {
		t.Fatalf("zot rpc did not answer the ping: %s\nstderr:\n%s", out, stderr.String())
	}
	tr, err := inittrace.Parse(&stderr)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) == 0 {
		t.Fatalf("no init lines on stderr: GODEBUG=inittrace=1 printed nothing")
	}
	for _, in := range tr {
		for _, heavy := range heavyInits {
			if (in.Package == heavy || strings.HasPrefix(in.Package, heavy+"/")) && in.Bytes > 0 {
				t.Errorf("%s runs at every start of zot and allocates %d bytes in %d allocations there: "+
					"keep it out of the binary, or out of package initialisation", in.Package, in.Bytes, in.Allocs)
			}
		}
	}
	for _, in := range tr {
		for _, pkg := range noInits {
			if in.Package == pkg || strings.HasPrefix(in.Package, pkg+"/") {
				t.Errorf("%s has package initialisation (%d bytes), which every zot process runs though zot rpc never uses the package: "+
					"build the value on first use (a switch, or a map made inside a function)", in.Package, in.Bytes)
			}
		}
	}
	if got := tr.Bytes(); got > initBudget {
		t.Errorf("package inits allocate %d bytes at every start, over the budget of %d; the heaviest:\n%s",
			got, initBudget, tr.Heaviest(15))
	} else {
		t.Logf("package inits: %d packages, %d bytes (budget %d), %d allocations", len(tr), got, initBudget, tr.Allocs())
	}
}

// productBinary returns zot as users build it: the binary under test,
// unless that one has the race detector, whose runtime allocates in inits
// of its own; then one built here with the Makefile's tags.
func productBinary(t *testing.T) string {
	t.Helper()
	info, err := buildinfo.ReadFile(zotBin)
	if err != nil {
		t.Fatalf("reading the build settings of %s: %v", zotBin, err)
	}
	race := false
	for _, s := range info.Settings {
		race = race || (s.Key == "-race" && s.Value == "true")
	}
	if !race {
		return zotBin
	}
	if testing.Short() {
		t.Skip("zot under test has the race detector, and -short builds no other")
	}
	bin := filepath.Join(t.TempDir(), "zot")
	cmd := exec.Command("go", "build", "-tags", zotbin.Tags, "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"
)

// zot is one program built twice. The full build (go install, or
// `go build ./cmd/zot`) holds everything. The lean build (the zotlean
// build tag; `make build` and `make install` install it as zot) leaves
// out what a spawned `zot rpc` or `zot acp` never runs and whose code
// would still cost it memory: the terminal client, the daemon's
// WebSocket listeners, the traffic tap and its inspector. Asked for one
// of those, the lean build becomes the full one, installed beside it as
// zot-full, with the same arguments, environment, process id and file
// descriptors (docs/architecture.md, One program).

// fullBinary is the full build's name beside the lean zot.
const fullBinary = "zot-full"

// rootCommandNames are the root's commands (a test holds them equal to
// newCLI's): a first argument that is none of them is the terminal's
// prompt.
var rootCommandNames = []string{"ext", "agents", "rpc", "daemon", "acp", "worker", "attach", "trust", "untrust",
	"sessions", "config", "skills", "models", "version", "help", "completion"}

// needsFull decides, from the command line and whether stdin and stdout
// are a terminal, what in it only the full build serves: "" when the
// lean build serves all of it, else what needs the full build, for the
// error when zot-full is missing. It reads only the arguments, before
// anything runs, and decides the same in both builds. A doubtful case
// answers for the full build, which serves everything.
func needsFull(args []string, terminal bool) string {
	// The root's flags that take a value: their value is never a command.
	valued := map[string]bool{}
	for _, f := range slices.Concat(modeFlags(), outputFlags(), agentFlags(), rpcFlags(), terminalFlags()) {
		if _, isBool := f.(*cli.BoolFlag); isBool {
			continue
		}
		for _, n := range f.Names() {
			valued[n] = true
		}
	}
	command, prompt := "", false
	set := map[string]bool{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break // what follows is the terminal's prompt
		}
		if name, ok := strings.CutPrefix(a, "-"); ok && name != "" {
			name = strings.TrimPrefix(name, "-")
			name, _, hasValue := strings.Cut(name, "=")
			set[name] = true
			if command == "" && !hasValue && valued[name] {
				i++ // the flag's value
			}
			continue
		}
		if command == "" && !prompt {
			if slices.Contains(rootCommandNames, a) {
				command = a
			} else {
				prompt = true
			}
		}
	}
	any := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return set[n] })
	}
	switch {
	case set["help"] || set["h"] || set["generate-shell-completion"]:
		return ""
	case command == "attach":
		return "zot attach (the terminal client)"
	case command == "daemon" && any(append([]string{"inspect", "inspect-addr", "inspect-ring"}, listenFlagNames...)...):
		return "zot daemon --listen and --inspect (the WebSocket listeners and the inspector)"
	case any("inspect", "inspect-ring"):
		return "--inspect (the traffic inspector)"
	case command == "" && terminal && !any("p", "print", "rpc", "version", "v", "json"):
		return "zot on a terminal (the terminal client)"
	}
	return ""
}

// becomeFull replaces the lean zot with the full build beside it, when
// the command line needs it: the same arguments, environment, process id
// and file descriptors. It returns only when the lean build serves the
// command line, or with the exit status of an error it printed.
func becomeFull(args []string, terminal bool, stderr *os.File) (code int, done bool) {
	what := needsFull(args, terminal)
	if what == "" {
		return 0, false
	}
	path, err := besideSelf(fullBinary)
	if err == nil {
		err = syscall.Exec(path, args, os.Environ())
		err = fmt.Errorf("starting %s: %w", path, err)
	}
	fmt.Fprintf(stderr, "zot: %s needs the full build of zot, %s: %v; make install (or make build) puts it beside zot, and go install zot.dev/zot/cmd/zot builds a zot with everything\n", what, fullBinary, err)
	return 2, true
}

// besideSelf returns the path of the program name in the running zot's
// directory (symbolic links followed), or an error saying where it
// looked.
func besideSelf(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding zot's own path: %w", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	path := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s is not beside zot (%s)", name, path)
	}
	return path, nil
}

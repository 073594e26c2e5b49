package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// findDefaultMax is find's default cap on results.
const findDefaultMax = 1000

// findTool lists files whose paths match a glob.
type findTool struct{ cfg Config }

func (*findTool) Name() string { return "find" }

func (*findTool) Description() string {
	return "Find files and directories by glob pattern under a directory (default: the working " +
		"directory). The pattern is matched against paths relative to that directory: '*' and '?' " +
		"stay within one path segment, '**' spans directories (\"src/**/*.go\"); a pattern without " +
		"'/' also matches file names at any depth (\"*.go\"). Skips .git and files excluded by " +
		".gitignore. Results are sorted, relative to the working directory, directories end in '/'; " +
		"named pipes, sockets and devices are marked with their kind in parentheses, as read and " +
		"grep do not open them."
}

func (*findTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob matched against paths relative to the search directory, e.g. \"**/*_test.go\" or \"*.md\"; '**' spans directories."},
    "path": {"type": "string", "description": "Directory to search, absolute or relative to the working directory. Default: the working directory."},
    "max_results": {"type": "integer", "minimum": 1, "description": "Stop after this many results. Default 1000."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (t *findTool) Run(ctx context.Context, call Call) (Result, error) {
	var pattern, path string
	maxResults := findDefaultMax
	if _, err := decodeArgs(call.Args, "",
		stringArg("pattern", true, &pattern),
		stringArg("path", false, &path),
		intArg("max_results", false, &maxResults),
	); err != nil {
		return invalidArgs(err), nil
	}
	pattern = strings.TrimPrefix(strings.TrimPrefix(pattern, "./"), "/")
	glob := compileGlob(pattern)
	switch {
	case len(glob.segs) == 0:
		return Errorf(`invalid arguments: field "pattern" must not be empty`), nil
	case maxResults < 1:
		return Errorf(fmt.Sprintf(`invalid arguments: field "max_results" must be at least 1, got %d`, maxResults)), nil
	}
	nameOnly := !strings.Contains(pattern, "/")
	if path == "" {
		path = "."
	}
	abs := resolvePath(t.cfg.CWD, path)
	shown := displayPath(t.cfg.CWD, abs)
	st, err := os.Stat(abs)
	if err != nil {
		return Errorf(fmt.Sprintf("cannot search %s: %v", shown, unwrapPathError(err))), nil
	}
	if !st.IsDir() {
		return Errorf(fmt.Sprintf("%s is a %s, not a directory; find searches directories", shown, fileKind(st.Mode()))), nil
	}

	var out strings.Builder
	found, stopped := 0, false
	err = newTreeWalker(abs).walk(ctx, func(p, rel string, d fs.DirEntry) error {
		if !glob.match(rel) && !(nameOnly && matchSegment(glob.segs[0], d.Name())) {
			return nil
		}
		if found == maxResults {
			stopped = true
			return fs.SkipAll
		}
		found++
		out.WriteString(displayPath(t.cfg.CWD, p))
		switch {
		case d.IsDir():
			out.WriteByte('/')
		case isSpecial(d.Type()):
			fmt.Fprintf(&out, " (%s)", fileKind(d.Type()))
		}
		out.WriteByte('\n')
		return nil
	})
	if ctx.Err() != nil {
		return Errorf("aborted"), nil
	}
	if err != nil {
		return Errorf(fmt.Sprintf("cannot search %s: %v", shown, unwrapPathError(err))), nil
	}
	if found == 0 {
		return Text(fmt.Sprintf("no paths match %q in %s", pattern, shown)), nil
	}
	if stopped {
		fmt.Fprintf(&out, "[stopped after %d results; narrow the pattern or raise max_results]\n", maxResults)
	}
	return Text(strings.TrimSuffix(out.String(), "\n")), nil
}

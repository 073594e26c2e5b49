package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// lsMaxEntries caps the entries ls shows.
const lsMaxEntries = 1000

// lsTool lists a directory.
type lsTool struct{ cfg Config }

func (*lsTool) Name() string { return "ls" }

func (*lsTool) Description() string {
	return "List a directory's entries, sorted by name (default: the working directory). " +
		"Directories end in '/', symlinks show as 'name -> target', named pipes, sockets and devices " +
		"as 'name (kind)'. Hidden entries (starting " +
		"with '.') are left out unless all is true."
}

func (*lsTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list, absolute or relative to the working directory. Default: the working directory."},
    "all": {"type": "boolean", "description": "Include hidden entries (names starting with '.'). Default false."}
  },
  "additionalProperties": false
}`)
}

func (t *lsTool) Run(ctx context.Context, call Call) (Result, error) {
	var path string
	var all bool
	if _, err := decodeArgs(call.Args, "",
		stringArg("path", false, &path),
		boolArg("all", false, &all),
	); err != nil {
		return invalidArgs(err), nil
	}
	if path == "" {
		path = "."
	}
	if ctx.Err() != nil {
		return Errorf("aborted"), nil
	}
	abs := resolvePath(t.cfg.CWD, path)
	shown := displayPath(t.cfg.CWD, abs)
	st, err := os.Stat(abs)
	if err != nil {
		return Errorf(fmt.Sprintf("cannot list %s: %v", shown, unwrapPathError(err))), nil
	}
	switch {
	case st.Mode().IsRegular():
		return Errorf(fmt.Sprintf("%s is not a directory; use read to see a file", shown)), nil
	case !st.IsDir():
		return Errorf(fmt.Sprintf("%s is a %s, not a directory; ls lists directories", shown, fileKind(st.Mode()))), nil
	}
	entries, err := readDirSorted(abs)
	if err != nil && len(entries) == 0 {
		return Errorf(fmt.Sprintf("cannot list %s: %v", shown, unwrapPathError(err))), nil
	}
	var names []string
	for _, e := range entries {
		if !all && strings.HasPrefix(e.Name(), ".") {
			continue
		}
		names = append(names, lsEntry(abs, e))
	}
	if len(names) == 0 {
		return Text(fmt.Sprintf("%s is empty", shown)), nil
	}
	var out strings.Builder
	for _, n := range names[:min(len(names), lsMaxEntries)] {
		out.WriteString(n)
		out.WriteByte('\n')
	}
	if len(names) > lsMaxEntries {
		fmt.Fprintf(&out, "[%d more entries not shown; %d of %d listed]\n", len(names)-lsMaxEntries, lsMaxEntries, len(names))
	}
	return Text(strings.TrimSuffix(out.String(), "\n")), nil
}

// lsEntry renders one directory entry.
func lsEntry(dir string, e fs.DirEntry) string {
	name := e.Name()
	switch {
	case e.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil {
			return name + " -> ?"
		}
		return name + " -> " + target
	case e.IsDir():
		return name + "/"
	case isSpecial(e.Type()):
		return name + " (" + fileKind(e.Type()) + ")"
	}
	return name
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// writeTool creates or replaces a file.
type writeTool struct{ cfg Config }

func (*writeTool) Name() string { return "write" }

func (*writeTool) Description() string {
	return "Write a file with the given content, replacing it if it exists and creating " +
		"missing parent directories. An existing file keeps its permissions and owner and is " +
		"replaced atomically, except a file with other hard links (or one whose owner could " +
		"not be kept), which is rewritten in place so that every link sees the new content; " +
		"that write is not atomic. A file you may not write, anything but a regular file, and " +
		"a symbolic link to a missing file are refused. Prefer edit for changing part of an " +
		"existing file."
}

func (*writeTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to write, absolute or relative to the working directory."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)
}

func (t *writeTool) Run(ctx context.Context, call Call) (Result, error) {
	var path, content string
	if _, err := decodeArgs(call.Args, "",
		stringArg("path", true, &path),
		stringArg("content", true, &content),
	); err != nil {
		return invalidArgs(err), nil
	}
	if path == "" {
		return Errorf(`invalid arguments: field "path" must not be empty`), nil
	}
	if ctx.Err() != nil {
		return Errorf("aborted"), nil
	}
	abs := resolvePath(t.cfg.CWD, path)
	shown := displayPath(t.cfg.CWD, abs)
	grant, res, denied := t.cfg.checkWrite(abs)
	if denied {
		return res, nil
	}
	if fa := fileAccess(ctx); fa != nil {
		if res, ok := writeThrough(ctx, fa, abs, shown, content); ok {
			return res, nil
		}
	}
	how, err := t.cfg.writeFile(abs, []byte(content), grant)
	if err != nil {
		return Errorf(fmt.Sprintf("cannot write %s: %v", shown, err)), nil
	}
	what := "overwritten"
	switch {
	case how.created:
		what = "created"
	case how.inPlace != "":
		what = "overwritten in place " + how.inPlace
	}
	return Text(fmt.Sprintf("wrote %d bytes (%d lines) to %s (%s)", len(content), countLines(content), shown, what)), nil
}

// countLines counts lines the way an editor shows them: a final line
// without a newline counts, an empty text has none.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

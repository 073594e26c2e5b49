package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// editContext is the number of unchanged lines shown around each change.
const editContext = 3

// editMaxBytes is the largest file edit takes: it holds a file several
// times over in memory while it matches, rewrites and diffs it.
const editMaxBytes = 64 << 20

// editTool replaces exact text in a file.
type editTool struct {
	cfg Config
	// maxBytes replaces editMaxBytes when not zero.
	maxBytes int64
}

func (*editTool) Name() string { return "edit" }

func (*editTool) Description() string {
	return "Edit a file by exact text replacement. Each edit's old_text must match exactly " +
		"one place in the current file (whitespace and indentation included); add surrounding " +
		"lines to make it unique. All edits are matched against the original file, must not " +
		"overlap, and are applied together. Line endings and a byte order mark are preserved. " +
		"The file is written as write does (atomically, or in place when it has other hard " +
		"links) and keeps its permissions and owner. Returns a unified diff of the change. " +
		"Only regular text files of up to " + byteSize(editMaxBytes) + " that you may write " +
		"are edited; use bash for larger ones."
}

func (*editTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to edit, absolute or relative to the working directory."},
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements to apply together. Each old_text must occur exactly once in the original file and edits must not overlap.",
      "items": {
        "type": "object",
        "properties": {
          "old_text": {"type": "string", "description": "Exact text to replace; must match exactly one place in the file."},
          "new_text": {"type": "string", "description": "Text to put in its place."}
        },
        "required": ["old_text", "new_text"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`)
}

// decodeEdits decodes the edits array, accepting oldText/newText as
// aliases of old_text/new_text.
func decodeEdits(raw []json.RawMessage) ([]textEdit, error) {
	if len(raw) == 0 {
		return nil, &argError{`field "edits" must hold at least one edit`}
	}
	out := make([]textEdit, len(raw))
	for i, r := range raw {
		where := fmt.Sprintf("edits[%d]", i)
		var oldS, newS, oldC, newC string
		present, err := decodeArgs(r, where,
			stringArg("old_text", false, &oldS),
			stringArg("new_text", false, &newS),
			stringArg("oldText", false, &oldC),
			stringArg("newText", false, &newC),
		)
		if err != nil {
			return nil, err
		}
		pick := func(snake, camel string, sv, cv string) (string, error) {
			switch {
			case present[snake] && present[camel]:
				return "", &argError{fmt.Sprintf("%s has both %q and %q; give only %q", where, snake, camel, snake)}
			case present[snake]:
				return sv, nil
			case present[camel]:
				return cv, nil
			}
			return "", &argError{fmt.Sprintf("missing required field %q", where+"."+snake)}
		}
		if out[i].old, err = pick("old_text", "oldText", oldS, oldC); err != nil {
			return nil, err
		}
		if out[i].new, err = pick("new_text", "newText", newS, newC); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *editTool) Run(ctx context.Context, call Call) (Result, error) {
	var path string
	var rawEdits []json.RawMessage
	if _, err := decodeArgs(call.Args, "",
		stringArg("path", true, &path),
		arrayArg("edits", true, &rawEdits),
	); err != nil {
		return invalidArgs(err), nil
	}
	if path == "" {
		return Errorf(`invalid arguments: field "path" must not be empty`), nil
	}
	abs := resolvePath(t.cfg.CWD, path)
	shown := displayPath(t.cfg.CWD, abs)
	// The check comes first: a write allowed once is used up by this
	// call, whatever else is wrong with it.
	grant, res, denied := t.cfg.checkWrite(abs)
	if denied {
		return res, nil
	}
	edits, err := decodeEdits(rawEdits)
	if err != nil {
		return invalidArgs(err), nil
	}
	if fa := fileAccess(ctx); fa != nil {
		return t.runThrough(ctx, fa, abs, shown, edits, grant), nil
	}
	content, err := t.load(ctx, abs, shown)
	if err != nil {
		return Errorf(err.Error()), nil
	}
	if looksBinary(content) {
		return Errorf(fmt.Sprintf("%s is a binary file; edit works on text files only", shown)), nil
	}
	out, err := applyEdits(content, edits, shown)
	if err != nil {
		return Errorf(err.Error()), nil
	}
	if ctx.Err() != nil {
		return Errorf("aborted"), nil
	}
	how, err := t.cfg.writeFile(abs, out.content, grant)
	if err != nil {
		return Errorf(fmt.Sprintf("cannot write %s: %v", shown, err)), nil
	}
	inPlace := ""
	if how.inPlace != "" {
		inPlace = "; written in place " + how.inPlace
	}
	diff, added, removed := unifiedDiff(shown, splitLinesKeep(out.before), splitLinesKeep(out.after), editContext)
	noun := "edits"
	if len(edits) == 1 {
		noun = "edit"
	}
	return Text(fmt.Sprintf("applied %d %s to %s (+%d -%d lines%s)\n%s", len(edits), noun, shown, added, removed, inPlace, diff)), nil
}

// load reads the file to edit. Its errors are meant for the model.
func (t *editTool) load(ctx context.Context, abs, shown string) ([]byte, error) {
	f, st, err := openRegular(abs)
	var wrong *wrongTypeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cannot edit %s: no such file; use write to create it", shown)
	case errors.As(err, &wrong):
		return nil, fmt.Errorf("cannot edit %s: it %v; edit changes only regular files", shown, wrong)
	case err != nil:
		return nil, fmt.Errorf("cannot edit %s: %v", shown, unwrapPathError(err))
	}
	defer f.Close()
	limit := cmp.Or(t.maxBytes, editMaxBytes)
	tooLarge := func(size string) error {
		return fmt.Errorf("cannot edit %s: file too large for edit (%s, the limit is %s); use bash (sed, a script) to change it",
			shown, size, byteSize(limit))
	}
	if st.Size() > limit {
		return nil, tooLarge(byteSize(st.Size()))
	}
	content, err := readAllCapped(ctx, f, st.Size(), limit)
	switch {
	case errors.Is(err, errCapped):
		return nil, tooLarge("more than " + byteSize(limit))
	case ctx.Err() != nil:
		return nil, errors.New("aborted")
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", shown, unwrapPathError(err))
	}
	return content, nil
}

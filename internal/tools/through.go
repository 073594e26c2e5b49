package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"zot.dev/zot/internal/images"
)

// The paths of read, write, edit and bash through a FileAccess or a
// CommandRunner (see access.go). Each step the holder does not offer
// (ErrNotOffered) falls back to the disk or the shell.

// diskHoldsNonText reports whether the regular file at abs starts like an
// image or a binary file: those are read from the disk, not the client.
func diskHoldsNonText(abs string) bool {
	f, err := os.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return images.Sniff(head) != "" || looksBinary(head)
}

// clientText reads abs through fa after the checks the disk path makes:
// a directory or a special file is refused with the disk path's words
// (ok false hands the call to the disk path), an image or binary file
// is the disk's. ok false also when fa does not offer reading.
func clientText(ctx context.Context, fa FileAccess, abs string) (text string, ok bool, err error) {
	if st, err := os.Stat(abs); err == nil && (!st.Mode().IsRegular() || diskHoldsNonText(abs)) {
		return "", false, nil
	}
	text, err = fa.ReadTextFile(ctx, abs)
	if errors.Is(err, ErrNotOffered) {
		return "", false, nil
	}
	return text, true, err
}

// clientError words an error of the client for the model.
func clientError(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return "aborted"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	}
	return err.Error()
}

// readThrough serves a read call through fa; ok false leaves it to the
// disk.
func (t *readTool) readThrough(ctx context.Context, fa FileAccess, abs, shown string, offset, limit int) (Result, bool) {
	text, ok, err := clientText(ctx, fa, abs)
	if !ok {
		return Result{}, false
	}
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("aborted"), true
		}
		return Errorf(fmt.Sprintf("cannot read %s: %s", shown, clientError(ctx, err))), true
	}
	res, _ := t.readFrom(ctx, strings.NewReader(text), shown, int64(len(text)), offset, limit)
	return res, true
}

// writeThrough serves a write call through fa; ok false leaves it to
// the disk.
func writeThrough(ctx context.Context, fa FileAccess, abs, shown, content string) (Result, bool) {
	st, statErr := os.Stat(abs)
	if statErr == nil && !st.Mode().IsRegular() {
		return Result{}, false // the disk path refuses it in its words
	}
	err := fa.WriteTextFile(ctx, abs, content)
	if errors.Is(err, ErrNotOffered) {
		return Result{}, false
	}
	if err != nil {
		return Errorf(fmt.Sprintf("cannot write %s: %s", shown, clientError(ctx, err))), true
	}
	what := "overwritten"
	if errors.Is(statErr, fs.ErrNotExist) {
		what = "created"
	}
	return Text(fmt.Sprintf("wrote %d bytes (%d lines) to %s (%s through the editor)", len(content), countLines(content), shown, what)), true
}

// runThrough serves an edit call through fa: the text is the client's
// when it offers reading, the result is written through it when it
// offers writing; the disk serves what it does not offer, beneath the
// sandbox's writable folder (grant is checkWrite's for this call).
func (t *editTool) runThrough(ctx context.Context, fa FileAccess, abs, shown string, edits []textEdit, grant string) Result {
	var content []byte
	text, ok, err := clientText(ctx, fa, abs)
	switch {
	case !ok:
		if content, err = t.load(ctx, abs, shown); err != nil {
			return Errorf(err.Error())
		}
	case err != nil && ctx.Err() == nil && errors.Is(err, fs.ErrNotExist):
		return Errorf(fmt.Sprintf("cannot edit %s: no such file; use write to create it", shown))
	case err != nil:
		return Errorf(fmt.Sprintf("cannot edit %s: %s", shown, clientError(ctx, err)))
	default:
		if limit := cmp.Or(t.maxBytes, editMaxBytes); int64(len(text)) > limit {
			return Errorf(fmt.Sprintf("cannot edit %s: file too large for edit (%s, the limit is %s); use bash (sed, a script) to change it",
				shown, byteSize(int64(len(text))), byteSize(limit)))
		}
		content = []byte(text)
	}
	if looksBinary(content) {
		return Errorf(fmt.Sprintf("%s is a binary file; edit works on text files only", shown))
	}
	out, err := applyEdits(content, edits, shown)
	if err != nil {
		return Errorf(err.Error())
	}
	if ctx.Err() != nil {
		return Errorf("aborted")
	}
	where := "; written through the editor"
	err = fa.WriteTextFile(ctx, abs, string(out.content))
	if errors.Is(err, ErrNotOffered) {
		where = ""
		how, werr := t.cfg.writeFile(abs, out.content, grant)
		err = werr
		if werr == nil && how.inPlace != "" {
			where = "; written in place " + how.inPlace
		}
	}
	if err != nil {
		return Errorf(fmt.Sprintf("cannot write %s: %s", shown, clientError(ctx, err)))
	}
	diff, added, removed := unifiedDiff(shown, splitLinesKeep(out.before), splitLinesKeep(out.after), editContext)
	noun := "edits"
	if len(edits) == 1 {
		noun = "edit"
	}
	return Text(fmt.Sprintf("applied %d %s to %s (+%d -%d lines%s)\n%s", len(edits), noun, shown, added, removed, where, diff))
}

// runThrough serves a bash call through r; its output is cut to the
// same head and tail as the shell's, the whole of it in a spill file.
func (t *bashTool) runThrough(ctx context.Context, r CommandRunner, id, command string, timeout time.Duration) (Result, error) {
	res, err := r.RunCommand(ctx, Command{ToolCallID: id, Command: command, Dir: t.cfg.CWD, Timeout: timeout})
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("aborted"), nil
		}
		if errors.Is(err, ErrNotOffered) {
			// The client cannot run it (it left before the command
			// started): zot's own shell does.
			return t.run(ctx, command, timeout, nil)
		}
		return Errorf(fmt.Sprintf("cannot run the command in the editor's terminal: %v", err)), nil
	}
	newSpill := spillIn(t.cfg.SpillDir)
	if t.cfg.Spills != nil {
		newSpill = t.cfg.Spills.create
	}
	out := newOutputCapture(newSpill, nil)
	_, _ = out.Write([]byte(res.Output))
	text := out.finish()
	var notes []string
	if res.Truncated {
		notes = append(notes, "the terminal kept only the end of the output")
	}
	isErr := true
	switch {
	case res.TimedOut:
		notes = append(notes, "timed out after "+formatSeconds(timeout))
	case res.Signal != "":
		notes = append(notes, "killed by "+res.Signal)
	case res.ExitCode >= 0:
		isErr = res.ExitCode != 0
		notes = append(notes, "exit code "+strconv.Itoa(res.ExitCode))
	default:
		notes = append(notes, "the terminal did not report an exit status")
	}
	return commandResult(text, notes, isErr), nil
}

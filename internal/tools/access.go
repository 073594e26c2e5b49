package tools

import (
	"context"
	"errors"
	"time"
)

// FileAccess is where read, write and edit get and put the text of files
// when someone else holds them: an editor, whose unsaved buffers the
// model then sees and through which writes go (ACP's fs/read_text_file
// and fs/write_text_file). Without one in the call's context (see
// WithFileAccess) the tools use the disk. Images and binary files are
// always read from the disk: an editor holds text.
type FileAccess interface {
	// ReadTextFile returns the text of the file at path (absolute). A
	// file that does not exist is an error matching fs.ErrNotExist.
	ReadTextFile(ctx context.Context, path string) (string, error)
	// WriteTextFile replaces (or creates) the file at path with content.
	WriteTextFile(ctx context.Context, path, content string) error
}

// CommandRunner runs bash's commands somewhere else than in zot's own
// shell: an editor's terminal (ACP's terminal/*). Without one in the
// call's context (see WithCommandRunner) bash starts its own shell.
type CommandRunner interface {
	// RunCommand runs cmd to its end, its timeout, or ctx's end (an
	// abort), and returns what it printed. An abort returns ctx's error;
	// a timeout is a result with TimedOut set; ErrNotOffered (wrapped or
	// not) means the command did not start there (the editor has left)
	// and zot's own shell runs it.
	RunCommand(ctx context.Context, cmd Command) (CommandResult, error)
}

// ErrNotOffered is returned (wrapped or not) by a FileAccess method that
// the holder of the files does not offer (an editor that reads files but
// does not write them, or one that has left), or by a CommandRunner that
// cannot start the command: the tool uses the disk or zot's own shell
// for that step.
var ErrNotOffered = errors.New("not offered by the client")

// Command is one bash call handed to a CommandRunner.
type Command struct {
	// ToolCallID is the model's id of the call, so that the runner can
	// show its terminal with the call.
	ToolCallID string
	// Command is the shell command line.
	Command string
	// Dir is the working directory (absolute).
	Dir string
	// Timeout bounds the run; when it passes the command is killed.
	Timeout time.Duration
}

// CommandResult is what a CommandRunner reports of a command.
type CommandResult struct {
	// Output is the command's combined output as the runner kept it.
	Output string
	// Truncated says the runner dropped the start of the output.
	Truncated bool
	// ExitCode is the exit status; -1 when it ended by a signal or is
	// not known.
	ExitCode int
	// Signal names the signal that ended it, if one did.
	Signal string
	// TimedOut says the command was killed at the timeout.
	TimedOut bool
}

type accessKey struct{}
type runnerKey struct{}

// WithFileAccess returns ctx carrying fa: read, write and edit calls run
// under it use fa instead of the disk.
func WithFileAccess(ctx context.Context, fa FileAccess) context.Context {
	return context.WithValue(ctx, accessKey{}, fa)
}

// WithCommandRunner returns ctx carrying r: bash calls run under it use r
// instead of their own shell.
func WithCommandRunner(ctx context.Context, r CommandRunner) context.Context {
	return context.WithValue(ctx, runnerKey{}, r)
}

// fileAccess returns the FileAccess ctx carries, or nil.
func fileAccess(ctx context.Context) FileAccess {
	fa, _ := ctx.Value(accessKey{}).(FileAccess)
	return fa
}

// commandRunner returns the CommandRunner ctx carries, or nil.
func commandRunner(ctx context.Context) CommandRunner {
	r, _ := ctx.Value(runnerKey{}).(CommandRunner)
	return r
}

// AtClient reports whether a call of t made under ctx is served by a
// client of the session rather than by this process: read, write and
// edit under a FileAccess, bash under a CommandRunner it uses. An
// executor that runs the built-in tools on other machines leaves such
// calls to the process that holds ctx.
func AtClient(ctx context.Context, t Tool) bool {
	switch t := t.(type) {
	case *readTool, *writeTool, *editTool:
		return fileAccess(ctx) != nil
	case *bashTool:
		return commandRunner(ctx) != nil && (t.cfg.Sandbox == nil || !t.cfg.Sandbox.Restricts())
	}
	return false
}

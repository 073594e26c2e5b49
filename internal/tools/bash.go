package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/subproc"
)

// Timing of bash's process handling.
const (
	// bashKillAfter is how long the process group has between SIGTERM and
	// SIGKILL when a call times out or is aborted.
	bashKillAfter = 2 * time.Second
	// bashWaitDelay is how long the output pipe may stay open after the
	// shell has exited (a background child holding it) before zot stops
	// reading.
	bashWaitDelay = 500 * time.Millisecond
	// bashMaxTimeout caps the per-call timeout.
	bashMaxTimeout = 24 * time.Hour
)

// bashTool runs a shell command.
type bashTool struct{ cfg Config }

func (*bashTool) Name() string { return "bash" }

func (t *bashTool) Description() string {
	return "Run a shell command in the working directory (bash when available, else /bin/sh) " +
		"and return its combined stdout and stderr with the exit code. Each call starts a new " +
		"shell, so cd and variables do not carry over. Long output keeps its first and last " +
		"lines, and the output (its first " + strconv.Itoa(spillMax>>20) + " MiB) is saved to a file " +
		"named in the result, which stays until the session ends. The command is " +
		"killed after the timeout (default " + formatSeconds(t.cfg.BashTimeout) + "). Background " +
		"processes keep running, but their output after the command exits is not captured; " +
		"redirect it to a file. Credential variables (*_API_KEY, *_TOKEN, *_SECRET and the " +
		"like) are removed from the command's environment so they do not show up in output; " +
		"the command still runs as the same user as zot and can read zot's own environment " +
		"(under /proc) and its auth file. " + t.sandboxText()
}

// sandboxText says what the session's sandbox lets commands do; the
// description changes with it, and only with it (/jail, /unjail,
// set_sandbox), so that the tool list the model is sent stays the same
// from call to call.
func (t *bashTool) sandboxText() string {
	if t.cfg.Sandbox == nil {
		return "Commands are not sandboxed: they may change whatever that user may, and reach the network."
	}
	return t.cfg.Sandbox.Describe()
}

func (*bashTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The shell command to run."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Time limit in seconds for this call; overrides the default."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)
}

func (t *bashTool) Run(ctx context.Context, call Call) (Result, error) {
	var command string
	var seconds float64
	present, err := decodeArgs(call.Args, "",
		stringArg("command", true, &command),
		numberArg("timeout", false, &seconds),
	)
	if err != nil {
		return invalidArgs(err), nil
	}
	if strings.TrimSpace(command) == "" {
		return Errorf(`invalid arguments: field "command" must not be empty`), nil
	}
	timeout := t.cfg.BashTimeout
	if present["timeout"] {
		if !(seconds > 0) || math.IsInf(seconds, 0) {
			return Errorf(fmt.Sprintf(`invalid arguments: field "timeout" must be a positive number of seconds, got %v`, seconds)), nil
		}
		timeout = min(time.Duration(seconds*float64(time.Second)), bashMaxTimeout)
	}
	if ctx.Err() != nil {
		return Errorf("aborted"), nil
	}
	if r := commandRunner(ctx); r != nil && (t.cfg.Sandbox == nil || !t.cfg.Sandbox.Restricts()) {
		return t.runThrough(ctx, r, call.ID, command, timeout)
	}
	return t.run(ctx, command, timeout, call.Progress)
}

// shellPath returns the shell to run commands with: bash, else /bin/sh.
// The search of PATH is done once per value of PATH (it stats every
// directory before bash's, on every command otherwise); fresh looks it up
// again, for a shell that is gone.
func shellPath(fresh bool) string {
	path := os.Getenv("PATH")
	shells.mu.Lock()
	defer shells.mu.Unlock()
	if !fresh && shells.shell != "" && shells.path == path {
		return shells.shell
	}
	shell := "/bin/sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p
	}
	shells.path, shells.shell = path, shell
	return shell
}

// devNull is the null device, opened once, which every command reads as
// its stdin (nil, when it cannot be opened: then the command starts
// without one, as exec gives it).
var devNull = sync.OnceValue(func() io.Reader {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil
	}
	return f
})

// shells is the shell shellPath found, and the PATH it searched.
var shells struct {
	mu          sync.Mutex
	path, shell string
}

// run executes command and assembles the result.
func (t *bashTool) run(ctx context.Context, command string, timeout time.Duration, progress func(string)) (Result, error) {
	var pump *progressPump
	if progress != nil {
		pump = newProgressPump(progress)
	}
	newSpill := spillIn(t.cfg.SpillDir)
	if t.cfg.Spills != nil {
		newSpill = t.cfg.Spills.create
	}
	out := newOutputCapture(newSpill, pump)
	spec := subproc.Command{
		Stdin:     devNull(),
		Path:      shellPath(false),
		Args:      []string{"-c", command},
		Dir:       t.cfg.CWD,
		Env:       scrubEnv(t.cfg.Env),
		Stdout:    out,
		Stderr:    out,
		WaitDelay: bashWaitDelay,
		TermGrace: bashKillAfter,
	}
	proc, err := t.start(ctx, spec)
	if err != nil && errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil {
		// The shell found before is gone: look again.
		spec.Path = shellPath(true)
		proc, err = t.start(ctx, spec)
	}
	var denied *sandboxError
	if errors.As(err, &denied) {
		return Errorf(err.Error()), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("aborted"), nil
		}
		return Errorf(fmt.Sprintf("cannot start the shell: %v", err)), nil
	}

	stopPump := make(chan struct{})
	pumpDone := make(chan struct{})
	if pump != nil {
		go func() {
			defer close(pumpDone)
			pump.run(stopPump)
		}()
	} else {
		close(pumpDone)
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()

	var status string
	select {
	case <-proc.Done():
	case <-timer.C:
		status = "timed out after " + formatSeconds(timeout)
	case <-ctx.Done():
		status = "aborted"
	}
	if status != "" {
		// SIGTERM to the group, SIGKILL after bashKillAfter for whatever
		// of it is left. An abort asks for that ladder too, not a kill at
		// once: the context's end must not cut it short.
		_, _ = proc.Stop(context.WithoutCancel(ctx))
	}
	waitErr := proc.Wait()
	close(stopPump)
	<-pumpDone
	if pump != nil {
		pump.flush(true)
	}

	text := out.finish()
	isErr := status != ""
	var notes []string
	switch {
	case status != "":
		notes = append(notes, status)
	case errors.Is(waitErr, exec.ErrWaitDelay):
		notes = append(notes, "exit code 0",
			"background processes still hold the output; what they print after the command exited is not shown")
	case proc.ExitCode() >= 0:
		code := proc.ExitCode()
		isErr = code != 0
		notes = append(notes, "exit code "+strconv.Itoa(code))
	case proc.ProcessState() != nil:
		isErr = true
		notes = append(notes, proc.ProcessState().String())
	default:
		isErr = true
		notes = append(notes, fmt.Sprintf("waiting for the shell failed: %v", waitErr))
	}
	if isErr && status == "" && t.cfg.Sandbox != nil && deniedOutput(text) {
		if why := t.cfg.Sandbox.Explain(); why != "" {
			notes = append(notes, why)
		}
	}
	return commandResult(text, notes, isErr), nil
}

// deniedOutput reports whether a failed command's output shows the
// kinds of refusal a sandbox causes.
func deniedOutput(text string) bool {
	for _, s := range []string{"denied", "not permitted", "Read-only file system"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// start starts spec's process, through the sandbox when there is one.
func (t *bashTool) start(ctx context.Context, spec subproc.Command) (*subproc.Process, error) {
	if t.cfg.Sandbox == nil {
		return subproc.Start(ctx, spec)
	}
	prog, args, confine, err := t.cfg.Sandbox.Prepare(spec.Path, spec.Args)
	if err != nil {
		return nil, &sandboxError{err}
	}
	spec.Path, spec.Args, spec.Confine = prog, args, confine
	return subproc.Start(ctx, spec)
}

// sandboxError is why the sandbox could not start a command.
type sandboxError struct{ err error }

func (e *sandboxError) Error() string { return "the command did not run: " + e.err.Error() }

func (e *sandboxError) Unwrap() error { return e.err }

// commandResult is the result of a finished command, run by zot's own
// shell or the client's terminal: its output, "(no output)" when it
// printed nothing, then the notes on how it ended in brackets.
func commandResult(text string, notes []string, isErr bool) Result {
	if text == "" {
		text = "(no output)\n"
	} else if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += "[" + strings.Join(notes, "; ") + "]"
	if isErr {
		return Errorf(text)
	}
	return Text(text)
}

// formatSeconds renders d as seconds: "120s", "1.5s".
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

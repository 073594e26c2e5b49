package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/tools"
)

// The client's capabilities at work: when the client that sent a prompt
// offered fs/read_text_file and fs/write_text_file, the turn's read,
// write and edit calls go through it (the model sees its unsaved
// buffers; writes go through the editor); when it offered terminal/*,
// bash runs in its terminals, embedded in the tool call. Otherwise the
// disk and zot's own shell serve them.

// terminalOutputLimit is the outputByteLimit of the terminals zot
// creates: the client keeps at most the last this many bytes.
const terminalOutputLimit = 1 << 20

// codeResourceNotFound is ACP's resource_not_found, which a client's fs
// methods answer for a file that does not exist.
const codeResourceNotFound = -32002

// clientTimeout bounds the calls that clean up after a command (kill,
// output, release) once its own context has ended.
const clientTimeout = 10 * time.Second

// capabilities returns what the client said it offers at initialize.
func (h *conn) capabilities() acp.ClientCapabilities {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.caps == nil {
		return acp.ClientCapabilities{}
	}
	return *h.caps
}

// withClient returns ctx carrying the file access and the command runner
// of from, the client of a turn, for what it offers.
func (s *acpSession) withClient(ctx context.Context, from *conn) context.Context {
	caps := from.capabilities()
	if caps.Fs != nil && (caps.Fs.ReadTextFile || caps.Fs.WriteTextFile) {
		ctx = tools.WithFileAccess(ctx, &clientFiles{s: s, c: from, read: caps.Fs.ReadTextFile, write: caps.Fs.WriteTextFile})
	}
	if caps.Terminal {
		ctx = tools.WithCommandRunner(ctx, &clientTerminal{s: s, c: from})
	}
	return ctx
}

// clientFiles is a tools.FileAccess over fs/read_text_file and
// fs/write_text_file of one client.
type clientFiles struct {
	s           *acpSession
	c           *conn
	read, write bool
}

// ReadTextFile asks the client for the text of path.
func (f *clientFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	if !f.read {
		return "", tools.ErrNotOffered
	}
	raw, err := f.c.c.Call(ctx, acp.MethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: acp.SessionId(f.s.id), Path: path})
	if err != nil {
		return "", clientFault(acp.MethodFsReadTextFile, err)
	}
	// content is required: an answer without it (null, {}) is the
	// client's fault, never an empty file.
	var res struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", fmt.Errorf("%s: the client's answer does not decode: %w", acp.MethodFsReadTextFile, err)
	}
	if res.Content == nil {
		return "", fmt.Errorf("%s: the client's answer has no content (%s)", acp.MethodFsReadTextFile, clip(raw))
	}
	return *res.Content, nil
}

// WriteTextFile has the client write content to path.
func (f *clientFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if !f.write {
		return tools.ErrNotOffered
	}
	_, err := f.c.c.Call(ctx, acp.MethodFsWriteTextFile, acp.WriteTextFileRequest{SessionID: acp.SessionId(f.s.id), Path: path, Content: content})
	if err != nil {
		return clientFault(acp.MethodFsWriteTextFile, err)
	}
	return nil
}

// clientFault words the failure of a call to the client: ACP's
// resource-not-found is fs.ErrNotExist; a client that has left leaves the
// step to the disk (the turn goes on into the session file).
func clientFault(method string, err error) error {
	var je *jsonrpc.Error
	switch {
	case errors.Is(err, jsonrpc.ErrClosed):
		return tools.ErrNotOffered
	case errors.As(err, &je) && je.Code == codeResourceNotFound:
		return fmt.Errorf("%s: %s: %w", method, je.Message, fs.ErrNotExist)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// clientTerminal is a tools.CommandRunner over terminal/* of one client.
type clientTerminal struct {
	s *acpSession
	c *conn
}

// RunCommand runs cmd in a terminal of the client, shown in the tool
// call, and waits for it, its timeout or the turn's abort; the terminal
// is then killed if need be, read and released.
func (r *clientTerminal) RunCommand(ctx context.Context, cmd tools.Command) (tools.CommandResult, error) {
	sid := acp.SessionId(r.s.id)
	cwd := cmd.Dir
	limit := int64(terminalOutputLimit)
	raw, err := r.c.c.Call(ctx, acp.MethodTerminalCreate, acp.CreateTerminalRequest{
		SessionID: sid, Command: "bash", Args: []string{"-c", cmd.Command}, CWD: &cwd, OutputByteLimit: &limit,
	})
	if errors.Is(err, jsonrpc.ErrClosed) && !errors.Is(err, jsonrpc.ErrNotSent) {
		// The client was asked and left without answering: it may have
		// started the command, so running it in zot's shell could do its
		// work twice.
		return tools.CommandResult{}, fmt.Errorf("the editor left after it was asked to run the command in its terminal; whether it ran there is unknown: %w", err)
	}
	if err != nil {
		// A client that had left when asked runs nothing: the command
		// goes to zot's own shell, as it does for a client without
		// terminals.
		return tools.CommandResult{}, clientFault(acp.MethodTerminalCreate, err)
	}
	var created acp.CreateTerminalResponse
	if err := json.Unmarshal(raw, &created); err != nil || created.TerminalID == "" {
		return tools.CommandResult{}, fmt.Errorf("%s: the client's answer names no terminal", acp.MethodTerminalCreate)
	}
	id := created.TerminalID
	r.s.showTerminal(cmd.ToolCallID, id)
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), clientTimeout)
	defer cancel()
	ref := acp.TerminalOutputRequest{SessionID: sid, TerminalID: id}
	defer func() {
		if _, err := r.c.c.Call(cleanup, acp.MethodTerminalRelease, acp.ReleaseTerminalRequest{SessionID: sid, TerminalID: id}); err != nil {
			r.s.agent.logf("session %s: %s %s: %v", r.s.id, acp.MethodTerminalRelease, id, err)
		}
	}()

	wait, stop := context.WithTimeout(ctx, cmd.Timeout)
	defer stop()
	res := tools.CommandResult{ExitCode: -1}
	var exit acp.WaitForTerminalExitResponse
	raw, err = r.c.c.Call(wait, acp.MethodTerminalWaitForExit, acp.WaitForTerminalExitRequest{SessionID: sid, TerminalID: id})
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &exit); err != nil {
			return res, fmt.Errorf("%s: the client's answer does not decode: %w", acp.MethodTerminalWaitForExit, err)
		}
	case ctx.Err() != nil || wait.Err() != nil:
		if _, err := r.c.c.Call(cleanup, acp.MethodTerminalKill, acp.KillTerminalRequest{SessionID: sid, TerminalID: id}); err != nil {
			r.s.agent.logf("session %s: %s %s: %v", r.s.id, acp.MethodTerminalKill, id, err)
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.TimedOut = true
	case errors.Is(err, jsonrpc.ErrClosed):
		// The command ran in the client's terminal, which left with it:
		// running it again in zot's shell could do its work twice.
		return res, fmt.Errorf("the editor left while the command ran in its terminal; whether it finished is unknown: %w", err)
	default:
		return res, fmt.Errorf("%s: %w", acp.MethodTerminalWaitForExit, err)
	}
	raw, err = r.c.c.Call(cleanup, acp.MethodTerminalOutput, ref)
	if err != nil {
		return res, fmt.Errorf("%s: %w", acp.MethodTerminalOutput, err)
	}
	var out acp.TerminalOutputResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return res, fmt.Errorf("%s: the client's answer does not decode: %w", acp.MethodTerminalOutput, err)
	}
	res.Output, res.Truncated = out.Output, out.Truncated
	code, signal := exit.ExitCode, exit.Signal
	if out.ExitStatus != nil && code == nil && signal == nil {
		code, signal = out.ExitStatus.ExitCode, out.ExitStatus.Signal
	}
	if !res.TimedOut {
		if code != nil {
			res.ExitCode = int(*code)
		}
		if signal != nil {
			res.Signal = *signal
		}
	}
	return res, nil
}

// showTerminal embeds terminal id in tool call callID, before the
// command runs, and remembers it so that the call's last update keeps it.
func (s *acpSession) showTerminal(callID string, id acp.TerminalId) {
	s.mu.Lock()
	if s.x.terminals == nil {
		s.x.terminals = map[string]acp.TerminalId{}
	}
	s.x.terminals[callID] = id
	s.mu.Unlock()
	s.push(item{update: &acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{
		ToolCallID: acp.ToolCallId(callID),
		Content:    []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: id}}},
	}}})
}

// terminalContent returns the content that embeds the terminal of tool
// call callID (none when it ran in no terminal), and forgets it: a tool
// call's update replaces its content, so its last one names it again.
func (s *acpSession) terminalContent(callID string) []acp.ToolCallContent {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.x.terminals[callID]
	if !ok {
		return nil
	}
	delete(s.x.terminals, callID)
	return []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: id}}}
}

// clip returns raw, cut to 200 bytes, for an error message.
func clip(raw []byte) string {
	if len(raw) > 200 {
		return string(raw[:200]) + "…"
	}
	return string(raw)
}

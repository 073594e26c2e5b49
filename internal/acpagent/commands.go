package acpagent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/wire"
)

// Slash commands. A session offers zot's built-in commands and the
// commands of its extensions, told to its clients with
// available_commands_update after session/new, load and resume, and
// again when they change (the extensions are ready, /reload). A prompt
// whose text starts with /name (a name in that list) runs the command
// instead of going to the model; any other text starting with / is an
// ordinary prompt.

// builtin is one of zot's own slash commands.
type builtin struct {
	name, description, hint string
	run                     func(h *conn, s *session, args string) (reply string, err error)
}

// builtins are zot's own commands, in the order clients list them.
var builtins []builtin

func init() {
	builtins = []builtin{
		{"compact", "Summarize the conversation so far to free the model's context", "instructions for the summary (optional)", nil},
		{"clear", "Start the conversation over (the session keeps its id and settings)", "", runClear},
		{"model", "Show the models of this provider, or switch to one", "model id", runModel},
		{"mode", "Show the permission modes, or switch to one", "ask, accept_edits, auto or read_only", runMode},
		{"reload", "Restart this session's extensions (they are found again)", "", runReload},
	}
}

// command is one entry of a session's command list.
type command struct {
	name, description, hint string
	builtin                 *builtin
	extension               string // the extension that offers it
}

// commands lists the session's commands: the built-ins, then the
// extensions' (an extension command named like a built-in is left out).
func (s *session) commands() []command {
	out := make([]command, 0, len(builtins)+4)
	for i := range builtins {
		b := &builtins[i]
		out = append(out, command{name: b.name, description: b.description, hint: b.hint, builtin: b})
	}
	for _, c := range s.eng.ExtensionCommands() {
		if slices.ContainsFunc(builtins, func(b builtin) bool { return b.name == c.Name }) {
			continue
		}
		out = append(out, command{name: c.Name, description: c.Description, hint: "arguments (optional)", extension: c.Extension})
	}
	return out
}

// commandsUpdate is the session's available_commands_update.
func (s *session) commandsUpdate() *acp.SessionUpdate {
	list := s.commands()
	out := make([]acp.AvailableCommand, 0, len(list))
	for _, c := range list {
		ac := acp.AvailableCommand{Name: c.name, Description: c.description}
		if c.description == "" {
			ac.Description = "/" + c.name + " (from " + c.extension + ")"
		}
		if c.hint != "" {
			ac.Input = acp.AvailableCommandInput(fmt.Sprintf(`{"hint":%q}`, c.hint))
		}
		out = append(out, ac)
	}
	return &acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: out}}
}

// tellCommands queues the command list for one connection (only) or,
// when only is nil, for every connection that has the session open.
func (s *session) tellCommands(only *conn) {
	s.push(item{update: s.commandsUpdate(), only: only})
}

// announce returns r that, once its answer is queued, lets the session's
// updates reach the client (until then it was attached but told nothing
// of the session but its replay: its answer comes first), and tells it
// the notices nobody heard, the session's commands, and its title when
// it has one: what a client learns about a session it has just opened.
func (h *conn) announce(s *session, r jsonrpc.Reply) jsonrpc.Reply {
	return r.Then(func() {
		s.answered(h)
		s.tellUnheard(h) // notify.go
		s.tellCommands(h)
		if title := s.title(); title != "" {
			s.push(item{update: &acp.SessionUpdate{SessionInfoUpdate: &acp.SessionInfoUpdate{Title: &title}}, only: h})
		}
		if plan := lastPlan(s.eng.Transcript()); plan != nil {
			s.push(item{update: &acp.SessionUpdate{Plan: plan}, only: h})
		}
	})
}

// watchExtensions tells every client of the session the commands again
// whenever its extensions change, and makes the session's notices its
// clients' _zot/notify: once they are ready (at the latest as
// the first turn starts, so a client sees them before the turn's
// answer), and after /reload. The engine starts and stops them with the
// session.
func (s *session) watchExtensions() {
	s.eng.SetNoticeSink(engine.NoticeSink{Send: s.engineNotice}) // notify.go
	stop := s.eng.OnExtensionsChanged(func() {
		select {
		case <-s.stop:
		default:
			s.tellCommands(nil)
		}
	})
	s.mu.Lock()
	s.x.extTold = stop
	s.mu.Unlock()
}

// unwatchExtensions stops telling the commands.
func (s *session) unwatchExtensions() {
	s.mu.Lock()
	stop := s.x.extTold
	s.x.extTold = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// oneLine keeps a message on one line of the log.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// slashCommand returns the command a prompt names, with the rest of its
// text, when the prompt is one text block starting with /name of the
// session's list.
func (s *session) slashCommand(prompt []acp.ContentBlock) (command, string, bool) {
	name, args, ok := slashWords(prompt)
	if !ok {
		return command{}, "", false
	}
	for _, c := range s.commands() {
		if c.name == name {
			return c, strings.TrimSpace(args), true
		}
	}
	return command{}, "", false
}

// slashWords splits a prompt that is one text block starting with / into
// the name after the slash and the rest of its text.
func slashWords(prompt []acp.ContentBlock) (name, args string, ok bool) {
	if len(prompt) != 1 || prompt[0].Text == nil || !strings.HasPrefix(prompt[0].Text.Text, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(strings.TrimPrefix(prompt[0].Text.Text, "/"), " ")
	name = strings.TrimSpace(name)
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	return name, args, true
}

// runCommand serves a prompt that names a command: /compact and an
// extension's prompt run as a turn; the others answer with a message
// (agent_message_chunk) and end the turn at once.
func (h *conn) runCommand(s *session, c command, args string) jsonrpc.Reply {
	if c.builtin != nil && c.builtin.name == "compact" {
		t, err := s.submit(h, engine.Work{Compact: &engine.CompactInput{Instructions: args}})
		if err != nil {
			return jsonrpc.Fail(err)
		}
		return jsonrpc.Async(func(ctx context.Context) (any, error) {
			if err := h.await(ctx, s, t); err != nil {
				return nil, err
			}
			return t.result()
		})
	}
	if s.eng.Busy() {
		return jsonrpc.Fail(appError(acp.ErrorKindBusy, s.id, "session %s runs a prompt; send /%s after its answer", s.id, c.name))
	}
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		var reply string
		var err error
		if c.builtin != nil {
			reply, err = c.builtin.run(h, s, args)
		} else {
			var prompt string
			reply, prompt, err = extensionCommand(ctx, s, c, args)
			if err == nil && prompt != "" {
				t, err := s.submit(h, engine.Work{Prompt: &engine.PromptInput{Text: prompt}})
				if err != nil {
					return nil, err
				}
				if err := h.await(ctx, s, t); err != nil {
					return nil, err
				}
				return t.result()
			}
		}
		if err != nil {
			return nil, err
		}
		if reply != "" {
			s.push(item{update: &acp.SessionUpdate{AgentMessageChunk: textChunk(reply)}, only: h})
		}
		if err := s.flush(ctx); err != nil {
			return nil, err
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	})
}

// extensionCommand runs an extension's command: it returns the text to
// show, or the prompt to run.
func extensionCommand(ctx context.Context, s *session, c command, args string) (reply, prompt string, err error) {
	out, err := s.eng.RunExtensionCommand(ctx, c.name, args)
	if err != nil {
		if errors.Is(err, engine.ErrClosed) {
			return "", "", appError(acp.ErrorKindInternal, s.id, "/%s: the session's extensions have stopped", c.name)
		}
		return "", "", jsonrpc.NewError(int64(acp.ErrorKindInternal.Code()), string(acp.ErrorKindInternal), "/%s: %v", c.name, err)
	}
	res := out.Result
	switch res.Action {
	case wire.CommandActionPrompt:
		return "", res.Text, nil
	case wire.CommandActionDisplay, wire.CommandActionInsert:
		return res.Text, "", nil
	case wire.CommandActionOpenPanel:
		return "/" + c.name + ": the extension opened a panel, which ACP clients cannot show", "", nil
	}
	if res.Error != "" {
		return "/" + c.name + ": " + res.Error, "", nil
	}
	return "", "", nil
}

// runClear serves /clear.
func runClear(_ *conn, s *session, _ string) (string, error) {
	if err := s.eng.Clear(); err != nil {
		if errors.Is(err, engine.ErrBusy) {
			return "", appError(acp.ErrorKindBusy, s.id, "session %s runs a prompt; send /clear after its answer", s.id)
		}
		return "", jsonrpc.Internal(err)
	}
	return "The conversation was cleared.", nil
}

// runModel serves /model [id].
func runModel(_ *conn, s *session, args string) (string, error) {
	opt := s.configOptions()[0]
	if args == "" {
		var b strings.Builder
		fmt.Fprintf(&b, "Model: %s. Models of %s:", opt.CurrentValue, s.eng.Provider())
		for _, c := range opt.Options {
			fmt.Fprintf(&b, "\n- %s (%s)", c.Value, c.Description)
		}
		return b.String(), nil
	}
	if !slices.ContainsFunc(opt.Options, func(c configChoice) bool { return c.Value == args }) {
		return fmt.Sprintf("%q is not a %s model; /model lists them.", args, s.eng.Provider()), nil
	}
	if err := s.eng.SetModel(args); err != nil {
		return "", jsonrpc.Internal(err)
	}
	s.push(item{note: configUpdate{SessionID: s.id, Update: configUpdateBody{Kind: "config_option_update", ConfigOptions: s.rawConfigOptions()}}})
	return "Model: " + args + ".", nil
}

// runMode serves /mode [id].
func runMode(_ *conn, s *session, args string) (string, error) {
	if args == "" {
		var b strings.Builder
		fmt.Fprintf(&b, "Mode: %s. Modes:", s.mode())
		for _, m := range s.eng.Modes() {
			fmt.Fprintf(&b, "\n- %s: %s", m.ID, m.Description)
		}
		return b.String(), nil
	}
	if err := s.eng.SetMode(engine.PermissionMode(args)); err != nil {
		return fmt.Sprintf("%q is not a mode of this session; /mode lists them.", args), nil
	}
	s.tellMode()
	return "Mode: " + args + ".", nil
}

// runReload serves /reload: the extensions stop, are found again and
// start; every client is told the commands again (watchExtensions).
func runReload(_ *conn, s *session, _ string) (string, error) {
	ctx, cancel := context.WithTimeout(s.agent.ctx, 4*clientTimeout)
	defer cancel()
	list, err := s.eng.ReloadExtensions(ctx)
	if err != nil {
		return "", jsonrpc.Internal(fmt.Errorf("reloading the extensions: %w", err))
	}
	if len(list) == 0 {
		return "No extension was found for " + filepath.Clean(s.cwd) + ".", nil
	}
	return fmt.Sprintf("The extensions were reloaded (%d).", len(list)), nil
}

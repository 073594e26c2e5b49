package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/sdk/wire"
)

// Slash commands. A session has one list of commands, the same in every
// door: zot's built-in ones (help, compact, clear, model, mode, reload,
// undo, jail, unjail, skills),
// then its extensions' in their load order. One name means one command:
// a built-in keeps its name in every session, so an extension's command
// of that name is left out (and logged once); of two extensions'
// commands with one name, the extension loaded first keeps it. Running a
// command returns what the door shows (CommandRun): a text, a panel, or
// work (a prompt, a compaction) the door submits with its own sink.

// builtinCommand is one of zot's own slash commands.
type builtinCommand struct {
	name, description, hint string
	run                     func(ctx context.Context, s *Session, args string) (CommandRun, error)
}

// builtinCommands are zot's own commands, in the order clients list
// them.
var builtinCommands []builtinCommand

func init() {
	builtinCommands = []builtinCommand{
		{"help", "List the commands", "", runHelp},
		{"compact", "Summarize the conversation so far to free the model's context", "instructions for the summary (optional)", runCompact},
		{"clear", "Start the conversation over (the session keeps its id and settings)", "", runClear},
		{"model", "Show the models of this provider, or switch to one", "model id", runModel},
		{"mode", "Show the permission modes, or switch to one", "ask, accept_edits, auto or read_only", runMode},
		{"reload", "Restart this session's extensions (they are found again)", "", runReload},
		{"undo", "Undo the last turn, or turn n and every turn after it: its file changes and its messages", "turn number (optional)", runUndo},
		{"jail", "Confine the tools: writes only under the working directory and the temp dir (or none, with read-only), and no network unless allowed", "read-only (optional)", runJail},
		{"unjail", "Let the tools change anything zot's user may (sandbox full)", "", runUnjail},
		{"skills", "List the skills the model may load, or show one's instructions", "skill name (optional)", runSkills},           // skills.go
		{"agents", "List the agent profiles the model may start sub-agents with, or show one", "agent name (optional)", runAgents}, // subagents.go
	}
}

// extensionHint is the hint of an extension's command: the extension
// protocol does not say what its arguments are.
const extensionHint = "arguments (optional)"

// CommandRun is what running a slash command asks of the door.
type CommandRun struct {
	// Result is run_command's answer: who answered (Extension is empty
	// for zot's own commands) and what (Action, Text, Panel, Error). For
	// action prompt and compact the door submits Work and fills in
	// Started, Queued and Position.
	Result wire.RunCommandResult
	// Event, when not nil, shows the answer (ext_display, ext_insert,
	// panel_open), not yet stamped: the door hands it to Notice after its
	// answer, with its command's id as prompt_id.
	Event wire.Event
	// Work, for action prompt and compact, is the work to submit: Prompt
	// or Compact is set; the door sets ID, Sink, Ready and Ctx.
	Work *Work
	// Changed says what the command changed, for a door that tells its
	// clients apart from the answer (ACP's current_mode_update,
	// config_option_update, available_commands_update).
	Changed Changes
}

// Changes are what a command changed.
type Changes struct {
	// Mode: the permission mode.
	Mode bool
	// Model: the model.
	Model bool
	// Commands: the list of commands (the extensions were reloaded).
	Commands bool
	// Transcript: the transcript was cleared.
	Transcript bool
}

// commandState is what the session keeps about its commands.
type commandState struct {
	mu     sync.Mutex
	logged map[string]bool // extension commands left out, logged once per name
}

// Commands lists the session's slash commands: the built-ins, then the
// ready extensions' (see ExtensionCommands; call WaitExtensions first for
// the list a prompt would see).
func (s *Session) Commands() []wire.SlashCommand {
	ext := s.ExtensionCommands()
	out := make([]wire.SlashCommand, 0, len(builtinCommands)+len(ext))
	for _, b := range builtinCommands {
		out = append(out, wire.SlashCommand{Name: b.name, Description: b.description, Source: wire.CommandSourceBuiltin, Hint: b.hint})
	}
	for _, c := range ext {
		if isBuiltinCommand(c.Name) {
			s.shadowed(c)
			continue
		}
		c.Source, c.Hint = wire.CommandSourceExtension, extensionHint
		out = append(out, c)
	}
	return out
}

// HasCommand reports whether name is a command of the session's list as
// it is now.
func (s *Session) HasCommand(name string) bool {
	return isBuiltinCommand(name) || slices.ContainsFunc(s.ExtensionCommands(), func(c wire.SlashCommand) bool { return c.Name == name })
}

// isBuiltinCommand reports whether name is one of zot's own commands.
func isBuiltinCommand(name string) bool {
	return slices.ContainsFunc(builtinCommands, func(b builtinCommand) bool { return b.name == name })
}

// shadowed logs, once per name, an extension's command left out because
// a built-in has its name.
func (s *Session) shadowed(c wire.SlashCommand) {
	s.cmds.mu.Lock()
	defer s.cmds.mu.Unlock()
	if s.cmds.logged[c.Name] {
		return
	}
	if s.cmds.logged == nil {
		s.cmds.logged = map[string]bool{}
	}
	s.cmds.logged[c.Name] = true
	if s.log != nil {
		fmt.Fprintf(s.log, "zot: command /%s of extension %s is left out: zot's own /%s has that name\n", c.Name, c.Extension, c.Name)
	}
}

// RunCommand runs the slash command name (with or without its leading
// slash) with args (the rest of the command line): one of zot's own, or an extension's (it waits for the
// extensions first, as a prompt does). It fails with an error wrapping
// ErrNotFound for a command nobody offers, ErrBusy for clear, model <id>
// and reload while work runs or waits, ErrExtension when an extension
// fails, and ErrClosed once the session is closed.
func (s *Session) RunCommand(ctx context.Context, name, args string) (CommandRun, error) {
	name = strings.TrimPrefix(name, "/")
	args = strings.TrimSpace(args)
	if i := slices.IndexFunc(builtinCommands, func(b builtinCommand) bool { return b.name == name }); i >= 0 {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return CommandRun{}, ErrClosed
		}
		return builtinCommands[i].run(ctx, s, args)
	}
	out, err := s.RunExtensionCommand(ctx, name, args)
	if errors.Is(err, exthost.ErrUnknownCommand) {
		// Neither zot nor an extension offers it: say where the list is.
		return CommandRun{}, &kindError{kind: ErrNotFound, err: fmt.Errorf("unknown command /%s: /help lists zot's and the extensions' commands", name)}
	}
	if err != nil {
		return CommandRun{}, err
	}
	run := CommandRun{Result: out.Result, Event: out.Event}
	switch out.Result.Action {
	case wire.CommandActionPrompt:
		run.Work = &Work{Prompt: &PromptInput{Text: out.Result.Text}}
	case wire.CommandActionOpenPanel:
		if out.Result.Panel != nil {
			s.panels.opened(out.Result.Extension, *out.Result.Panel)
		}
	}
	return run, nil
}

// display is a built-in's answer: text to show.
func display(text string) CommandRun {
	return CommandRun{
		Result: wire.RunCommandResult{Action: wire.CommandActionDisplay, Text: text},
		Event:  &wire.ExtDisplayEvent{Text: text},
	}
}

// refusal is a built-in's answer to arguments it cannot take: nothing
// done, and why.
func refusal(text string) CommandRun {
	return CommandRun{Result: wire.RunCommandResult{Action: wire.CommandActionNoop, Error: text}}
}

// runHelp serves /help.
func runHelp(_ context.Context, s *Session, _ string) (CommandRun, error) {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, c := range s.Commands() {
		fmt.Fprintf(&b, "\n/%s", c.Name)
		if c.Hint != "" {
			fmt.Fprintf(&b, " [%s]", c.Hint)
		}
		switch {
		case c.Description != "" && c.Extension != "":
			fmt.Fprintf(&b, ": %s (from %s)", c.Description, c.Extension)
		case c.Description != "":
			fmt.Fprintf(&b, ": %s", c.Description)
		case c.Extension != "":
			fmt.Fprintf(&b, ": from %s", c.Extension)
		}
	}
	return display(b.String()), nil
}

// runCompact serves /compact [instructions]: work for the door to submit.
func runCompact(_ context.Context, _ *Session, args string) (CommandRun, error) {
	return CommandRun{
		Result: wire.RunCommandResult{Action: wire.CommandActionCompact, Text: args},
		Work:   &Work{Compact: &CompactInput{Instructions: args}},
	}, nil
}

// runClear serves /clear.
func runClear(_ context.Context, s *Session, _ string) (CommandRun, error) {
	if err := s.Clear(); err != nil {
		return CommandRun{}, err
	}
	run := display("The conversation was cleared.")
	run.Changed.Transcript = true
	return run, nil
}

// runModel serves /model [id]: the models of the provider, or a switch
// to one of them.
func runModel(_ context.Context, s *Session, args string) (CommandRun, error) {
	list := s.Models()
	if args == "" {
		var b strings.Builder
		fmt.Fprintf(&b, "Model: %s. Models of %s:", s.Model(), s.Provider())
		for _, m := range list {
			fmt.Fprintf(&b, "\n- %s (%s)", m.ID, ModelSummary(m))
		}
		return display(b.String()), nil
	}
	if !slices.ContainsFunc(list, func(m wire.ModelInfo) bool { return m.ID == args }) {
		return refusal(fmt.Sprintf("%q is not a %s model; /model lists them.", args, s.Provider())), nil
	}
	err := s.SetModel(args)
	var re *ReasoningError
	if errors.As(err, &re) {
		// The new model does not take the current reasoning level: it
		// goes back to the model's default rather than refusing the
		// switch.
		none := ""
		err = s.SetModelReasoning(args, &none)
	}
	if err != nil {
		return CommandRun{}, err
	}
	run := display("Model: " + args + ".")
	run.Changed.Model = true
	return run, nil
}

// ModelSummary describes a model in a few words: its context window, and
// whether it reasons.
func ModelSummary(m wire.ModelInfo) string {
	d := strconv.FormatInt(m.ContextWindow/1000, 10) + "k context"
	if m.Reasoning {
		d += ", reasoning"
	}
	return d
}

// runMode serves /mode [id].
func runMode(_ context.Context, s *Session, args string) (CommandRun, error) {
	if args == "" {
		var b strings.Builder
		fmt.Fprintf(&b, "Mode: %s. Modes:", s.Mode())
		for _, m := range s.Modes() {
			fmt.Fprintf(&b, "\n- %s: %s", m.ID, m.Description)
		}
		return display(b.String()), nil
	}
	if err := s.SetMode(PermissionMode(args)); err != nil {
		return refusal(fmt.Sprintf("%q is not a mode of this session; /mode lists them.", args)), nil
	}
	run := display("Mode: " + args + ".")
	run.Changed.Mode = true
	return run, nil
}

// runJail serves /jail [read-only|workspace-write].
func runJail(_ context.Context, s *Session, args string) (CommandRun, error) {
	mode := string(sandbox.WorkspaceWrite)
	switch args {
	case "", string(sandbox.WorkspaceWrite):
	case string(sandbox.ReadOnly):
		mode = args
	default:
		return refusal(fmt.Sprintf("%q is not a confining sandbox mode: /jail takes read-only or workspace-write (or nothing).", args)), nil
	}
	if err := s.SetSandbox(mode, ""); err != nil {
		return CommandRun{}, err
	}
	return display(sandboxText(s)), nil
}

// runUnjail serves /unjail.
func runUnjail(_ context.Context, s *Session, _ string) (CommandRun, error) {
	if err := s.SetSandbox(string(sandbox.Full), ""); err != nil {
		return CommandRun{}, err
	}
	return display(sandboxText(s)), nil
}

// sandboxText describes the session's sandbox for people.
func sandboxText(s *Session) string {
	st := s.Sandbox()
	net := "off"
	if st.Network {
		net = "on"
	}
	text := fmt.Sprintf("Sandbox: %s, network %s", st.Mode, net)
	switch st.Mode {
	case wire.SandboxModeWorkspaceWrite:
		text += "; writable: " + strings.Join(st.Writable, ", ")
	case wire.SandboxModeReadOnly:
		text += "; no file may be written"
	}
	confines := st.Mode == wire.SandboxModeWorkspaceWrite || st.Mode == wire.SandboxModeReadOnly || !st.Network
	switch {
	case confines && st.EnforcedBy == string(sandbox.BackendNone):
		text += " (nothing here enforces it on commands: bash refuses to run; --sandbox off runs them unconfined)"
	case confines:
		text += " (enforced by " + st.EnforcedBy + ")"
	}
	return text + "."
}

// runReload serves /reload: the extensions stop, are found again and
// start.
func runReload(ctx context.Context, s *Session, _ string) (CommandRun, error) {
	list, err := s.ReloadExtensions(ctx)
	if err != nil {
		if errors.Is(err, ErrBusy) {
			return CommandRun{}, err
		}
		return CommandRun{}, fmt.Errorf("reloading the extensions: %w", err)
	}
	var run CommandRun
	if len(list) == 0 {
		run = display("No extension was found for " + filepath.Clean(s.cwd) + ".")
	} else {
		run = display(fmt.Sprintf("The extensions were reloaded (%d).", len(list)))
	}
	run.Changed.Commands = true
	return run, nil
}

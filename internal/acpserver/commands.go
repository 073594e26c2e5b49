package acpserver

import (
	"context"
	"fmt"
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

// commandsUpdate is the session's available_commands_update: the
// engine's list (the built-ins, then the extensions').
func (s *acpSession) commandsUpdate() *acp.SessionUpdate {
	list := s.eng.Commands()
	out := make([]acp.AvailableCommand, 0, len(list))
	for _, c := range list {
		ac := acp.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Description == "" {
			ac.Description = "/" + c.Name + " (from " + c.Extension + ")"
		}
		if c.Hint != "" {
			ac.Input = acp.AvailableCommandInput(fmt.Sprintf(`{"hint":%q}`, c.Hint))
		}
		out = append(out, ac)
	}
	return &acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: out}}
}

// tellCommands queues the command list for one connection (only) or,
// when only is nil, for every connection that has the session open.
func (s *acpSession) tellCommands(only *conn) {
	s.push(item{update: s.commandsUpdate(), only: only})
}

// announce returns r that, once its answer is queued, lets the session's
// updates reach the client (until then it was attached but told nothing
// of the session but its replay: its answer comes first), and tells it
// the notices nobody heard, the session's commands, and its title when
// it has one: what a client learns about a session it has just opened.
func (h *conn) announce(s *acpSession, r jsonrpc.Reply) jsonrpc.Reply {
	return r.Then(func() {
		s.answered(h)
		s.tellUnheard(h) // notify.go
		s.tellCommands(h)
		s.tellPanels(h) // panels.go
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
func (s *acpSession) watchExtensions() {
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
func (s *acpSession) unwatchExtensions() {
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
func (s *acpSession) slashCommand(prompt []acp.ContentBlock) (string, string, bool) {
	name, args, ok := slashWords(prompt)
	if !ok || !s.eng.HasCommand(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
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

// runCommand serves a prompt that names a command: the engine runs it,
// and the door shows what it answers. The work it asks for (/compact, an
// extension's prompt) runs as a turn; any other answer is a message
// (agent_message_chunk) that ends the turn at once, and a panel it opens
// is told as _zot/panel/opened. What it changed is told to every client of
// the session (the mode, the model's config options, the commands).
func (h *conn) runCommand(s *acpSession, name, args string) jsonrpc.Reply {
	if name == "compact" {
		// Submitted at once, as a prompt is, so that it keeps its place
		// among the requests that follow.
		out, err := s.eng.RunCommand(context.Background(), name, args)
		if err != nil {
			return jsonrpc.Fail(s.agent.errorOf(err, s.id, ""))
		}
		return h.runWork(s, *out.Work)
	}
	if s.eng.Busy() {
		return jsonrpc.Fail(appError(acp.ErrorKindBusy, s.id, "session %s runs a prompt; send /%s after its answer", s.id, name))
	}
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		if name == "reload" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, 4*clientTimeout)
			defer cancel()
		}
		out, err := s.eng.RunCommand(ctx, name, args)
		if err != nil {
			return nil, s.agent.errorOf(fmt.Errorf("/%s: %w", name, err), s.id, "")
		}
		s.tellChanges(out.Changed)
		if out.Work != nil {
			return h.runWork(s, *out.Work).Await(ctx)
		}
		if reply := commandReply(s, name, out); reply != "" {
			chunk := textChunk(reply)
			if a := out.Result.Action; a == wire.CommandActionInsert || a == wire.CommandActionDisplay {
				// What the text is for, which ACP cannot say: a client
				// that knows puts an insert into its input, and shows a
				// display as the command's note.
				chunk.Meta = map[string]any{"zot": map[string]any{"action": string(a)}}
			}
			s.push(item{update: &acp.SessionUpdate{AgentMessageChunk: chunk}, only: h})
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	})
}

// runWork submits the work a command asked for and answers once its
// turn has ended.
func (h *conn) runWork(s *acpSession, w engine.Work) jsonrpc.Reply {
	t, err := s.submit(h, w)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		if err := h.await(ctx, s, t); err != nil {
			return nil, err
		}
		return t.result()
	}).Then(t.markAnswered)
}

// commandReply is the text a command's answer shows the client that
// sent it.
func commandReply(s *acpSession, name string, out engine.CommandRun) string {
	res := out.Result
	switch {
	case res.Error != "" && res.Extension == "":
		return res.Error // zot's own commands say what went wrong in full
	case res.Error != "":
		return "/" + name + ": " + res.Error
	case res.Action == wire.CommandActionOpenPanel && res.Panel != nil:
		s.openPanel(res.Extension, *res.Panel, nil) // panels.go
		return ""
	}
	return res.Text
}

// tellChanges tells every client of the session what a command changed.
func (s *acpSession) tellChanges(c engine.Changes) {
	if c.Mode {
		s.tellMode()
	}
	if c.Model {
		s.push(item{note: configUpdate{SessionID: s.id, Update: configUpdateBody{Kind: "config_option_update", ConfigOptions: s.rawConfigOptions()}}})
	}
	// New commands are told by watchExtensions, as the engine reports
	// the extensions changed.
}

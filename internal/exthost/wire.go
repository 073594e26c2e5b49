package exthost

import (
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// This file turns what the host knows into the types of zot's doors
// (schema/rpc/extensions.json), so that `zot rpc` and the Go SDK say the
// same.

// WireCommands returns the commands in their wire form.
func WireCommands(list []Command) []wire.SlashCommand {
	out := make([]wire.SlashCommand, 0, len(list))
	for _, c := range list {
		out = append(out, wire.SlashCommand{Name: c.Name, Description: c.Description, Extension: c.Extension})
	}
	return out
}

// WireExtensions returns the extensions in their wire form.
func WireExtensions(list []Info) []wire.ExtensionInfo {
	out := make([]wire.ExtensionInfo, 0, len(list))
	for _, i := range list {
		w := wire.ExtensionInfo{
			Name:     i.Name,
			Version:  i.Version,
			Origin:   i.Origin.String(),
			Dir:      i.Dir,
			State:    i.State,
			Error:    i.Error,
			Tools:    i.Tools,
			Commands: i.Commands,
		}
		if w.Tools == nil {
			w.Tools = []string{}
		}
		if w.Commands == nil {
			w.Commands = []string{}
		}
		out = append(out, w)
	}
	return out
}

// Event returns the notice as the event clients get, not yet stamped.
func (n Notice) Event() wire.Event {
	switch n.Kind {
	case NoticePanelRender:
		return &wire.PanelRenderEvent{Extension: n.Extension, PanelID: n.Panel.ID, Title: n.Panel.Title, Lines: n.Panel.Lines, Footer: n.Panel.Footer}
	case NoticePanelClose:
		return &wire.PanelCloseEvent{Extension: n.Extension, PanelID: n.Panel.ID}
	}
	level := string(n.Level)
	if level == "" {
		level = string(extwire.NotifyLevelInfo)
	}
	return &wire.ExtNotifyEvent{Extension: n.Extension, Source: n.Source, Level: level, Message: n.Message}
}

// Outcome turns a command's answer into the result `run_command` gives
// and the event that shows it (nil for prompt and noop). For prompt, the
// caller submits Text and adds the start to the result.
func Outcome(c Command, r *extwire.CommandResponseFrame) (wire.RunCommandResult, wire.Event) {
	res := wire.RunCommandResult{Extension: c.Extension, Action: wire.CommandAction(r.Action), Error: r.Error}
	switch r.Action {
	case extwire.CommandActionPrompt:
		res.Text = r.Prompt
	case extwire.CommandActionDisplay:
		res.Text = r.Display
		return res, &wire.ExtDisplayEvent{Extension: c.Extension, Text: r.Display}
	case extwire.CommandActionInsert:
		res.Text = r.Insert
		return res, &wire.ExtInsertEvent{Extension: c.Extension, Text: r.Insert}
	case extwire.CommandActionOpenPanel:
		if p := r.OpenPanel; p != nil {
			res.Panel = &wire.Panel{ID: p.ID, Title: p.Title, Lines: p.Lines, Footer: p.Footer}
			return res, &wire.PanelOpenEvent{Extension: c.Extension, PanelID: p.ID, Title: p.Title, Lines: p.Lines, Footer: p.Footer}
		}
		res.Action = wire.CommandActionNoop
		if res.Error == "" {
			res.Error = "the extension opened no panel"
		}
	default:
		res.Action = wire.CommandActionNoop
	}
	return res, nil
}

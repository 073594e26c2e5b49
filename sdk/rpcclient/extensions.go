package rpcclient

import (
	"context"

	"zot.dev/zot/sdk/wire"
)

// Commands lists the slash commands of zot's running extensions.
func (c *Client) Commands(ctx context.Context) ([]wire.SlashCommand, error) {
	r, err := call[wire.CommandsResult](ctx, c, &wire.GetCommandsCommand{})
	if err != nil {
		return nil, err
	}
	return r.Commands, nil
}

// Extensions lists the extensions zot found, in load order, with their
// state.
func (c *Client) Extensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	r, err := call[wire.ExtensionsResult](ctx, c, &wire.GetExtensionsCommand{})
	if err != nil {
		return nil, err
	}
	return r.Extensions, nil
}

// RunCommand runs a slash command, zot's own or an extension's (name
// without the slash, args the rest of the line), and returns what it
// answered. For action "prompt" (and "compact", zot's /compact) zot
// submits the work and the returned channel carries its events, as
// Prompt's does; for the other actions the channel is nil and
// the result holds the text or panel (the ext_display, ext_insert or
// panel_open event that follows goes to Options.OnEvent, if at all). It
// fails with wire.CodeNotFound for a command neither zot nor an extension offers and
// wire.CodeExtensionError when the extension fails to answer.
func (c *Client) RunCommand(ctx context.Context, name, args string) (wire.RunCommandResult, <-chan wire.Event, error) {
	res, s, err := c.runCommand(ctx, name, args)
	if err != nil || s == nil {
		return res, nil, err
	}
	return res, c.events(ctx, s), nil
}

// RunCommandStream is RunCommand returning the prompt's events as a
// [*Stream].
//
// Deprecated: Use RunCommand, whose channel of events is the shape
// [client.Client] shares with the in-process sdk.Runtime.
func (c *Client) RunCommandStream(ctx context.Context, name, args string) (*wire.RunCommandResult, *Stream, error) {
	res, s, err := c.runCommand(ctx, name, args)
	if err != nil {
		return nil, nil, err
	}
	return &res, s, nil
}

// runCommand sends run_command with a registered stream, kept only for
// the actions that start work: "prompt" and "compact".
func (c *Client) runCommand(ctx context.Context, name, args string) (wire.RunCommandResult, *Stream, error) {
	s := newStream(wire.TypeRunCommandCommand)
	resp, err := c.send(ctx, &wire.RunCommandCommand{Name: name, Args: args}, s)
	if err != nil {
		return wire.RunCommandResult{}, nil, err
	}
	res, err := resultOf[wire.RunCommandResult](resp)
	if err != nil || (res.Action != wire.CommandActionPrompt && res.Action != wire.CommandActionCompact) {
		c.forget(s.ID)
		if err != nil {
			return wire.RunCommandResult{}, nil, err
		}
		return *res, nil, nil
	}
	s.Start = wire.StartResult{Queued: res.Queued, Position: res.Position}
	if res.Started != nil {
		s.Start.Started = *res.Started
	}
	return *res, s, nil
}

// PanelKey sends a key to an open extension panel; the extension answers,
// if at all, with panel_render or panel_close (see Options.OnEvent). It
// fails with wire.CodeNotFound when no panel of that id is open.
func (c *Client) PanelKey(ctx context.Context, panelID string, key wire.PanelKey, text string) error {
	_, err := c.send(ctx, &wire.PanelKeyCommand{PanelID: panelID, Key: key, Text: text}, nil)
	return err
}

// ClosePanel closes an open extension panel, as a user would.
func (c *Client) ClosePanel(ctx context.Context, panelID string) error {
	_, err := c.send(ctx, &wire.ClosePanelCommand{PanelID: panelID}, nil)
	return err
}

// ReloadExtensions stops zot's extensions, finds them again and starts
// them; it returns them once they are ready. It fails with wire.CodeBusy
// while a prompt or compact runs or is queued.
func (c *Client) ReloadExtensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	r, err := call[wire.ExtensionsResult](ctx, c, &wire.ReloadExtensionsCommand{})
	if err != nil {
		return nil, err
	}
	return r.Extensions, nil
}

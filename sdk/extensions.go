package sdk

import (
	"context"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// ExtensionConfig says which extensions (docs/extensions.md) a Runtime
// runs: Paths, Discover, TrustProject, Home, OnEvent, HandshakeTimeout.
// The zero value runs none. Nothing is found implicitly: extensions load
// only from the folders named here. The Runtime's session owns them: it
// starts them at New and stops them at Close.
type ExtensionConfig = engine.ExtensionConfig

// ErrNotFound is returned for a slash command neither zot nor an extension offers, a
// panel no extension has open, and an MCP server the Runtime does not
// have. It is [client.ErrNotFound], an error of code not_found, which
// rpcclient's answers of that code match too.
var ErrNotFound = client.ErrNotFound

// Extensions describes the extensions found, in load order, with their
// state (starting, ready, failed, exited).
func (r *Runtime) Extensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	return r.sess.Extensions(), nil
}

// Commands lists the slash commands, as every door of zot lists them:
// zot's own (help, compact, clear, model, mode, reload; Source
// "builtin"), then those of the running extensions.
func (r *Runtime) Commands(ctx context.Context) ([]wire.SlashCommand, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	return r.sess.Commands(), nil
}

// RunCommand runs a slash command, zot's own or an extension's (name
// without the slash; args the rest of the line), and carries out its
// answer, as `zot rpc`'s run_command does. For action "prompt" (an
// extension's) and "compact" (/compact) the work is started and its
// events come on the returned channel, as Prompt's do (ErrBusy while
// another prompt runs); for every other action the channel is nil and the
// result holds the text or panel to show. An extension's command waits
// for the extensions' handshakes first; it fails with ErrNotFound for a
// command nobody offers, ErrBusy for /clear, /model id and /reload while
// a prompt runs, and with the extension's failure when it crashes or
// does not answer in time.
func (r *Runtime) RunCommand(ctx context.Context, name, args string) (wire.RunCommandResult, <-chan Event, error) {
	if r.isClosed() {
		return wire.RunCommandResult{}, nil, ErrClosed
	}
	out, err := r.sess.RunCommand(ctx, name, args)
	if err != nil {
		return wire.RunCommandResult{}, nil, r.mapErr(err)
	}
	res := out.Result
	if out.Work == nil {
		return res, nil, nil
	}
	w := *out.Work
	w.Ctx = ctx
	ch, err := r.submit(w)
	if err != nil {
		return res, nil, err
	}
	started := true
	res.Started = &started
	return res, ch, nil
}

// PanelKey sends a key ("up", "down", "enter", "esc", "rune" with text,
// …) to the extension whose panel panelID is open; it answers, if at
// all, with a *wire.PanelRenderEvent or *wire.PanelCloseEvent through
// ExtensionConfig.OnEvent. A key that is not one of wire.PanelKey's
// values fails with wire.CodeInvalidParams and is sent to no extension.
func (r *Runtime) PanelKey(ctx context.Context, panelID string, key wire.PanelKey, text string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	return r.mapErr(r.sess.PanelKey(panelID, extwire.KeyName(key), text))
}

// ClosePanel closes an open extension panel, as a user would.
func (r *Runtime) ClosePanel(ctx context.Context, panelID string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	owner, err := r.sess.ClosePanel(panelID)
	if err != nil {
		return r.mapErr(err)
	}
	// Told as every door tells it: Config.Extensions.OnEvent gets the
	// panel_close, and the session's open panels lose it.
	r.sess.Notice(&wire.PanelCloseEvent{Extension: owner, PanelID: panelID})
	return nil
}

// ReloadExtensions stops every extension, finds them again and starts
// them, and returns them once they are ready (or the handshake timeout
// has passed). It returns ErrBusy while a prompt or compaction runs.
func (r *Runtime) ReloadExtensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	if r.isClosed() {
		return nil, ErrClosed
	}
	list, err := r.sess.ReloadExtensions(ctx)
	return list, r.mapErr(err)
}

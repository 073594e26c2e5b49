package sdk

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// ExtensionConfig says which extensions (docs/extensions.md) a Runtime
// runs. The zero value runs none. Nothing is found implicitly: extensions
// load only from the folders named here.
type ExtensionConfig struct {
	// Paths are extension folders, or their extension.json files, loaded
	// first and in order; of two with one name, the first wins.
	Paths []string
	// Discover also loads the extensions of the project (CWD/.zot/
	// extensions) and, when Home is set, those of Home/extensions. The
	// project's run only in a folder the user trusts (`zot trust`, kept
	// in Home's trust store; without Home no folder is trusted) or with
	// TrustProject.
	Discover bool
	// TrustProject runs the project's extensions whether or not the
	// folder is trusted, as --trust-project does.
	TrustProject bool
	// Home is a zot home directory: Discover loads Home/extensions, and
	// each extension's stderr is appended to Home/logs/ext-<name>.log.
	// Empty: no user extensions, and the extensions' stderr is dropped.
	Home string
	// OnEvent receives what extensions push at any time, outside any
	// prompt: *wire.ExtNotifyEvent (also zot's report of a crash, level
	// "error"), *wire.PanelRenderEvent and *wire.PanelCloseEvent. It is
	// called from the extension host's goroutines and must not block.
	// Nil drops them.
	OnEvent func(Event)
	// HandshakeTimeout bounds an extension's start, to its hello (its
	// manifest's start_timeout_ms when that is longer); 0 means 30 s.
	HandshakeTimeout time.Duration
}

// startExtensions starts the extensions of cfg, if any.
func (r *Runtime) startExtensions(cfg ExtensionConfig) {
	if len(cfg.Paths) == 0 && !cfg.Discover {
		return
	}
	hc := exthost.Config{
		Discovery:        exthost.Discovery{Paths: cfg.Paths},
		Version:          buildinfo.Version(),
		StartTimeout:     cfg.HandshakeTimeout,
		StartTimeoutName: "ExtensionConfig.HandshakeTimeout",
	}
	if cfg.Home != "" {
		hc.LogDir = filepath.Join(cfg.Home, "logs")
	}
	if cfg.Discover {
		hc.ProjectDir = filepath.Join(r.sess.CWD(), trust.ExtensionsDir)
		hc.Trust = &trust.Gate{All: cfg.TrustProject}
		if cfg.Home != "" {
			hc.GlobalDir = filepath.Join(cfg.Home, "extensions")
			hc.Trust.Store = &trust.Store{File: home.Home{Dir: cfg.Home}.TrustFile()}
		}
	}
	if f := cfg.OnEvent; f != nil {
		hc.Notify = func(n exthost.Notice) { f(n.Event()) }
	}
	r.ext = exthost.Start(r.sess, hc)
}

// stopExtensions stops the extensions by their shutdown ladder.
func (r *Runtime) stopExtensions() {
	if r.ext == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.ext.Close(ctx)
}

// ErrNotFound is returned for a slash command no extension offers and a
// panel no extension has open. It is [client.ErrNotFound], an error of
// code not_found, which rpcclient's answers of that code match too.
var ErrNotFound = client.ErrNotFound

// Extensions describes the extensions found, in load order, with their
// state (starting, ready, failed, exited).
func (r *Runtime) Extensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	return r.extensions(), nil
}

// extensions describes the extensions found.
func (r *Runtime) extensions() []wire.ExtensionInfo {
	if r.ext == nil {
		return []wire.ExtensionInfo{}
	}
	return exthost.WireExtensions(r.ext.Extensions())
}

// Commands lists the slash commands of the running extensions.
func (r *Runtime) Commands(ctx context.Context) ([]wire.SlashCommand, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	if r.ext == nil {
		return []wire.SlashCommand{}, nil
	}
	return exthost.WireCommands(r.ext.Commands()), nil
}

// RunCommand runs an extension's slash command (name without the slash;
// args the rest of the line) and carries out its answer, as `zot rpc`'s
// run_command does. For action "prompt" the prompt is started and its
// events come on the returned channel, as Prompt's do (ErrBusy while
// another prompt runs); for every other action the channel is nil and the
// result holds the text or panel to show. It waits for the extensions'
// handshakes first; it fails with ErrNotFound for a command no extension
// offers, and with the extension's failure when it crashes or does not
// answer in time.
func (r *Runtime) RunCommand(ctx context.Context, name, args string) (wire.RunCommandResult, <-chan Event, error) {
	if r.isClosed() {
		return wire.RunCommandResult{}, nil, ErrClosed
	}
	if r.ext == nil {
		return wire.RunCommandResult{}, nil, ErrNotFound
	}
	c, resp, err := r.ext.RunCommand(ctx, name, args)
	if err != nil {
		return wire.RunCommandResult{}, nil, r.extErr(err)
	}
	res, _ := exthost.Outcome(c, resp)
	if res.Action != wire.CommandActionPrompt || res.Text == "" {
		return res, nil, nil
	}
	ch, err := r.Prompt(ctx, res.Text, nil)
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
// ExtensionConfig.OnEvent.
func (r *Runtime) PanelKey(ctx context.Context, panelID string, key wire.PanelKey, text string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if r.ext == nil {
		return ErrNotFound
	}
	k := extwire.KeyName(key)
	if !slices.Contains(extwire.KeyNameValues, k) {
		return fmt.Errorf("zot: unknown key %q (one of up, down, left, right, enter, esc, tab, pageup, pagedown, home, end, backspace, delete, rune)", key)
	}
	return r.extErr(r.ext.PanelKey(panelID, k, text))
}

// ClosePanel closes an open extension panel, as a user would.
func (r *Runtime) ClosePanel(ctx context.Context, panelID string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if r.ext == nil {
		return ErrNotFound
	}
	_, err := r.ext.ClosePanel(panelID)
	return r.extErr(err)
}

// ReloadExtensions stops every extension, finds them again and starts
// them, and returns them once they are ready (or the handshake timeout
// has passed). It returns ErrBusy while a prompt or compaction runs.
func (r *Runtime) ReloadExtensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	if r.isClosed() {
		return nil, ErrClosed
	}
	if r.sess.Busy() {
		return nil, ErrBusy
	}
	if r.ext == nil {
		return []wire.ExtensionInfo{}, nil
	}
	if err := r.ext.Reload(ctx); err != nil {
		return nil, r.extErr(err)
	}
	return r.extensions(), nil
}

// extErr maps the extension host's errors to the SDK's.
func (r *Runtime) extErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exthost.ErrUnknownCommand), errors.Is(err, exthost.ErrUnknownPanel):
		return errors.Join(ErrNotFound, err)
	case errors.Is(err, exthost.ErrClosed):
		return ErrClosed
	}
	return err
}

package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// extDoor is the door's side of the extensions: their commands
// (get_commands, run_command, panel_key, close_panel, get_extensions,
// reload_extensions) and the events they push. The zero value serves
// without extensions.
type extDoor struct {
	host *exthost.Host

	mu    sync.Mutex
	w     *ndjson.Writer // set once Serve has started
	early []wire.Event   // events pushed before Serve started

	// The goroutines of run_command and reload_extensions, which wait on
	// extensions: ctx ends and wg is waited for when Serve ends.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	launch *time.Timer // starts the extensions (see ExtensionLaunchDelay)
	// dropped counts pushed events dropped because the client was not
	// reading; the first drop is logged.
	dropped int
}

// ExtensionBacklogLimit is how many frames may wait for the client before
// the events the schema marks droppable (wire.DroppableEvent: notices,
// panel renders) are dropped: an extension that floods a client that
// reads slowly must not grow zot's memory without bound. Responses, the
// events of work and every other event are never dropped.
const ExtensionBacklogLimit = 4 * ndjson.DefaultHighWater

// ExtensionLaunchDelay is how long after Serve starts the extensions are
// started, unless a command that needs them comes first (a prompt, a
// slash command, listing them): so that zot answers its first command
// (hello, ping, get_state) before they compete with it for the machine.
const ExtensionLaunchDelay = 20 * time.Millisecond

// SetExtensions gives the server the extension host of its session;
// call it before Serve. Its notices should reach ExtensionNotice. Serve
// launches the extensions (see ExtensionLaunchDelay) if nothing did
// before.
func (s *Server) SetExtensions(h *exthost.Host) { s.ext.host = h }

// ExtensionNotice writes what an extension pushed as its event. It is
// safe to call before Serve (the events wait for it) and from any
// goroutine, and never blocks.
func (s *Server) ExtensionNotice(n exthost.Notice) { s.extEmit(n.Event()) }

// serve starts writing extension events to w, those pushed before first.
func (d *extDoor) serve(w *ndjson.Writer, sess *engine.Session) {
	d.ctx, d.cancel = context.WithCancel(context.Background())
	if d.host != nil {
		d.launch = time.AfterFunc(ExtensionLaunchDelay, d.host.Launch)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.w = w
	for _, ev := range d.early {
		sess.Emit(ev, func(ev wire.Event) { w.Send(ev) })
	}
	d.early = nil
}

// drain waits for the extension commands under way to be answered, or
// until ctx ends, which cancels them.
func (d *extDoor) drain(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.wg.Wait()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		if d.cancel != nil {
			d.cancel()
		}
		<-done
	}
}

// stop cancels the extension commands still waiting and waits for them.
func (d *extDoor) stop() {
	if d.launch != nil {
		d.launch.Stop()
	}
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
}

// extEmit stamps ev with the session's next seq and writes it.
func (s *Server) extEmit(ev wire.Event) {
	d := &s.ext
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		if len(d.early) < 1000 {
			d.early = append(d.early, ev)
		}
		return
	}
	if wire.DroppableEvent(ev) && d.w.Backlog() >= ExtensionBacklogLimit {
		if d.dropped == 0 {
			fmt.Fprintf(s.opts.Log, "zot: the client is not reading: dropping what extensions push until it catches up\n")
		}
		d.dropped++
		return
	}
	s.sess.Emit(ev, func(ev wire.Event) { d.w.Send(ev) })
}

// dispatchExtension answers the extension commands; it reports false for
// any other command.
func (s *Server) dispatchExtension(cmd wire.Command) bool {
	id, typ := cmd.GetID(), cmd.Type()
	h := s.ext.host
	switch c := cmd.(type) {
	case *wire.GetCommandsCommand:
		if h == nil {
			s.respond(id, typ, wire.CommandsResult{Commands: exthost.WireCommands(nil)})
			return true
		}
		// The list is of the extensions once they have started (or
		// failed): the reader serves other commands meanwhile.
		s.extAsync(func(ctx context.Context) {
			h.WaitReady(ctx)
			s.respond(id, typ, wire.CommandsResult{Commands: exthost.WireCommands(h.Commands())})
		})
	case *wire.GetExtensionsCommand:
		var list []exthost.Info
		if h != nil {
			list = h.Extensions()
		}
		s.respond(id, typ, wire.ExtensionsResult{Extensions: exthost.WireExtensions(list)})
	case *wire.RunCommandCommand:
		if h == nil {
			s.fail(id, typ, wire.CodeNotFound, "no extension offers /%s: zot runs without extensions", c.Name)
			return true
		}
		s.extAsync(func(ctx context.Context) { s.runCommand(ctx, id, typ, c) })
	case *wire.PanelKeyCommand:
		if err := s.panelCall(func() error { return h.PanelKey(c.PanelID, extwire.KeyName(c.Key), c.Text) }); err != nil {
			s.extFail(id, typ, err)
			return true
		}
		s.respond(id, typ, nil)
	case *wire.ClosePanelCommand:
		owner := ""
		err := s.panelCall(func() error {
			var err error
			owner, err = h.ClosePanel(c.PanelID)
			return err
		})
		if err != nil {
			s.extFail(id, typ, err)
			return true
		}
		s.respond(id, typ, nil)
		s.extEmit(&wire.PanelCloseEvent{PromptID: id, Extension: owner, PanelID: c.PanelID})
	case *wire.ReloadExtensionsCommand:
		if s.sess.Busy() {
			s.fail(id, typ, wire.CodeBusy, "%s: a prompt or compact is running or queued", typ)
			return true
		}
		if h == nil {
			s.respond(id, typ, wire.ExtensionsResult{Extensions: []wire.ExtensionInfo{}})
			return true
		}
		s.extAsync(func(ctx context.Context) {
			if err := h.Reload(ctx); err != nil {
				s.extFail(id, typ, err)
				return
			}
			s.respond(id, typ, wire.ExtensionsResult{Extensions: exthost.WireExtensions(h.Extensions())})
		})
	default:
		return false
	}
	return true
}

// panelCall runs f, or fails as not found without extensions.
func (s *Server) panelCall(f func() error) error {
	if s.ext.host == nil {
		return exthost.ErrUnknownPanel
	}
	return f()
}

// extAsync runs f on a goroutine the server waits for as it ends: the
// reader goes on serving other commands meanwhile.
func (s *Server) extAsync(f func(ctx context.Context)) {
	d := &s.ext
	ctx := d.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f(ctx)
	}()
}

// runCommand runs a slash command and carries out its answer.
func (s *Server) runCommand(ctx context.Context, id wire.ID, typ string, c *wire.RunCommandCommand) {
	cmd, r, err := s.ext.host.RunCommand(ctx, c.Name, c.Args)
	if err != nil {
		s.extFail(id, typ, err)
		return
	}
	res, ev := exthost.Outcome(cmd, r)
	if res.Action != wire.CommandActionPrompt {
		s.respond(id, typ, res)
		if ev != nil {
			ev.SetPromptID(id)
			s.extEmit(ev)
		}
		return
	}
	if res.Text == "" {
		res.Action = wire.CommandActionNoop
		if res.Error == "" {
			res.Error = "the extension's prompt is empty"
		}
		s.respond(id, typ, res)
		return
	}
	work := engine.Work{ID: id, Prompt: &engine.PromptInput{Text: res.Text}, Sink: s.sink, Ready: s.ready}
	err = s.sess.Submit(work, engine.Queue, func(sr wire.StartResult) {
		res.Started, res.Queued, res.Position = &sr.Started, sr.Queued, sr.Position
		s.respond(id, typ, res)
	})
	if err != nil {
		s.failErr(id, typ, err)
	}
}

// extFail answers a failed extension command with its code (wire.CodeOf):
// an error that carries none is the extension's failure to answer.
func (s *Server) extFail(id wire.ID, typ string, err error) {
	switch {
	case errors.Is(err, exthost.ErrClosed), errors.Is(err, context.Canceled):
		s.fail(id, typ, wire.CodeInternal, "%s: the server is shutting down", typ)
	case wire.CodeOf(err) == wire.CodeInternal:
		s.fail(id, typ, wire.CodeExtensionError, "%s", oneLine(err))
	default:
		s.failErr(id, typ, err)
	}
}

package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// extDoor is the door's side of the session's extensions: their commands
// (get_commands, run_command, panel_key, close_panel, get_extensions,
// reload_extensions) and the notices they push, which the session hands
// to the door's writer. The extensions themselves are the Session's.
type extDoor struct {
	// The goroutines of run_command and reload_extensions, which wait on
	// extensions: ctx ends and wg is waited for when Serve ends.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	launch *time.Timer // starts the extensions (see ExtensionLaunchDelay)
	// launching counts the launch's timer until its function has run or
	// it was stopped first; stop waits for it.
	launching sync.WaitGroup

	mu sync.Mutex
	// dropped counts notices dropped because the client was not reading;
	// the first drop is logged.
	dropped int
}

// ExtensionBacklogLimit is how many frames may wait for the client before
// the events the schema marks droppable (wire.DroppableEvent: notices,
// panel renders) are dropped: an extension that floods a client that
// reads slowly must not grow zot's memory without bound. Responses, the
// events of work and every other event are never dropped.
const ExtensionBacklogLimit = 4 * ndjson.DefaultHighWater

// ExtensionLaunchDelay is how long after Serve starts the session's
// extensions and MCP servers are started (when the session holds them
// back: engine.SessionConfig.DeferStart), unless a command that needs
// them comes first (a prompt, a slash command, listing them): so that zot
// answers its first command (hello, ping, get_state) before they compete
// with it for the machine.
const ExtensionLaunchDelay = 20 * time.Millisecond

// serveExtensions makes the writer the destination of the session's notices (those
// pushed before go first) and launches what the session holds back.
func (s *Server) serveExtensions() {
	d := &s.ext
	d.ctx, d.cancel = context.WithCancel(context.Background())
	s.sess.SetNoticeSink(engine.NoticeSink{
		Send: func(n engine.Notice) { s.w.Send(n.Event) },
		Full: s.noticesFull,
	})
	// The timer's goroutine is the door's like the others: stop waits for
	// it, or stops it before it runs.
	d.launching.Add(1)
	d.launch = time.AfterFunc(ExtensionLaunchDelay, func() {
		defer d.launching.Done()
		s.sess.Launch()
	})
}

// noticesFull reports whether the client is so far behind that a notice
// is to be dropped.
func (s *Server) noticesFull() bool {
	if s.w.Backlog() < ExtensionBacklogLimit {
		return false
	}
	d := &s.ext
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dropped == 0 {
		fmt.Fprintf(s.opts.Log, "zot: the client is not reading: dropping what extensions push until it catches up\n")
	}
	d.dropped++
	return true
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

// stop cancels the extension commands still waiting and waits for them,
// and for the launch when it has begun (one not begun never runs).
func (d *extDoor) stop() {
	if d.launch != nil && d.launch.Stop() {
		d.launching.Done() // stopped before it ran: its function never will
	}
	d.launching.Wait()
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
}

// dispatchExtension answers the extension commands; it reports false for
// any other command.
func (s *Server) dispatchExtension(cmd wire.Command) bool {
	id, typ := cmd.GetID(), cmd.Type()
	switch c := cmd.(type) {
	case *wire.GetCommandsCommand:
		if !s.sess.ExtensionsStarting() {
			s.respond(id, typ, wire.CommandsResult{Commands: s.sess.Commands()})
			return true
		}
		// The list is of the extensions once they have started (or
		// failed): the reader serves other commands meanwhile.
		s.extAsync(func(ctx context.Context) {
			s.sess.WaitExtensions(ctx)
			s.respond(id, typ, wire.CommandsResult{Commands: s.sess.Commands()})
		})
	case *wire.GetExtensionsCommand:
		s.respond(id, typ, wire.ExtensionsResult{Extensions: s.sess.Extensions()})
	case *wire.RunCommandCommand:
		s.extAsync(func(ctx context.Context) { s.runCommand(ctx, id, typ, c) })
	case *wire.PanelKeyCommand:
		if err := s.sess.PanelKey(c.PanelID, extwire.KeyName(c.Key), c.Text); err != nil {
			s.extFail(id, typ, err)
			return true
		}
		s.respond(id, typ, nil)
	case *wire.ClosePanelCommand:
		owner, err := s.sess.ClosePanel(c.PanelID)
		if err != nil {
			s.extFail(id, typ, err)
			return true
		}
		s.respond(id, typ, nil)
		s.sess.Notice(&wire.PanelCloseEvent{PromptID: id, Extension: owner, PanelID: c.PanelID})
	case *wire.ReloadExtensionsCommand:
		if s.sess.Busy() {
			s.fail(id, typ, wire.CodeBusy, "%s: a prompt or compact is running or queued", typ)
			return true
		}
		s.extAsync(func(ctx context.Context) {
			list, err := s.sess.ReloadExtensions(ctx)
			if err != nil {
				s.extFail(id, typ, err)
				return
			}
			s.respond(id, typ, wire.ExtensionsResult{Extensions: list})
		})
	default:
		return false
	}
	return true
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

// runCommand runs a slash command, zot's own or an extension's, and
// carries out its answer: the answer and the event that shows it, or the
// work it asks for (a prompt, a compaction), queued.
func (s *Server) runCommand(ctx context.Context, id wire.ID, typ string, c *wire.RunCommandCommand) {
	out, err := s.sess.RunCommand(ctx, c.Name, c.Args)
	if err != nil {
		s.extFail(id, typ, err)
		return
	}
	res := out.Result
	if out.Work == nil {
		s.respond(id, typ, res)
		if ev := out.Event; ev != nil {
			ev.SetPromptID(id)
			s.sess.Notice(ev)
		}
		return
	}
	work := *out.Work
	work.ID, work.Sink, work.Ready = id, s.sink, s.w.Ready
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
	case errors.Is(err, engine.ErrClosed), errors.Is(err, context.Canceled):
		s.fail(id, typ, wire.CodeInternal, "%s: the server is shutting down", typ)
	case wire.CodeOf(err) == wire.CodeInternal:
		s.fail(id, typ, wire.CodeExtensionError, "%s", oneLine(err))
	default:
		s.failErr(id, typ, err)
	}
}

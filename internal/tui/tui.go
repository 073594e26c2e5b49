// Package tui is zot's terminal client: a chat written into the
// terminal's scrollback (no alternate screen, no mouse capture, so the
// terminal's own selection, copy and scrolling keep working) with a live
// region at the bottom for the turn in progress, the input and a footer.
//
// It is an ACP client (package acpclient) and nothing else: the engine
// runs behind zot's acpserver, in the same process over an in-memory
// transport or in a daemon (`zot attach`). The wiring that starts the
// in-process server lives in cmd/zot; this tree imports no engine
// package (a test over `go list -deps` enforces it).
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/tui/acpclient"
	"zot.dev/zot/internal/tui/style"
)

// Start says which session the client opens.
type Start struct {
	// SessionID loads that stored session.
	SessionID string
	// Continue loads the newest session of the working directory, or
	// opens a new one when it has none.
	Continue bool
	// Resume opens a picker of the working directory's sessions
	// (Attach: of every session the daemon has).
	Resume bool
}

// Options configure Run.
type Options struct {
	// Transport is the connection to the ACP agent. Required.
	Transport jsonrpc.Transport
	// CWD is the working directory of a new session. Required.
	CWD string
	// Prompt pre-fills the input (zot "prompt").
	Prompt string
	// Start chooses the session.
	Start Start
	// Attach says the agent is a daemon the client joined: the session
	// picker lists every session, and leaving does not end them.
	Attach bool
	// Intro is shown first, above the chat (a first-run message, what
	// was left out).
	Intro []string
	// Version is zot's, told to the agent in initialize.
	Version string
	// Theme chooses colours and glyphs (style.FromEnv).
	Theme style.Options
	// Input and Output are the terminal (os.Stdin and os.Stdout when
	// nil).
	Input  io.Reader
	Output io.Writer
	// Width and Height, when set, fix the size (tests).
	Width, Height int
	// Settings remembers the last model and mode; nil remembers nothing.
	Settings Settings
	// Sessions remembers the model and mode of each session, for an
	// agent that does not keep them when a session is loaded again (a
	// daemon's sessions come back in the daemon's own): a session opened
	// is put back in the model and mode it had when last seen here. nil
	// remembers nothing.
	Sessions SessionSettings
	// Mode, when set, is the permission mode the session is put in once
	// it is open (the one remembered from the last run).
	Mode string
	// HistoryFile keeps the prompts sent in this folder
	// (editor.HistoryPath); empty keeps them in memory only.
	HistoryFile string
}

// Settings is where the client keeps what it remembers between runs.
type Settings interface {
	// Remember saves the model and mode last chosen ("" leaves one as
	// it is).
	Remember(model, mode string) error
}

// SessionSettings keeps the model and mode of each session.
type SessionSettings interface {
	// Recall returns the model and mode session had when last seen
	// ("" for one not known).
	Recall(sessionID string) (model, mode string)
	// Keep records the model and mode session has now.
	Keep(sessionID, model, mode string) error
}

// Run runs the client until the person leaves (Ctrl-D, Ctrl-C twice,
// /exit), ctx ends, or the connection to the agent ends.
func Run(ctx context.Context, o Options) error {
	if o.Transport == nil {
		return errors.New("tui: no transport")
	}
	if o.Input == nil {
		o.Input = os.Stdin
	}
	if o.Output == nil {
		o.Output = os.Stdout
	}
	m := newModel(ctx, o)
	// Lines printed before the renderer's first frame are placed as if
	// a frame filled the screen (the screen scrolls, the lines land at
	// its top): printing waits for the terminal's first write.
	out, written := watchFirstWrite(o.Output)
	m.firstFrame, m.framed = written, false
	// 120 frames a second: a key reaches the screen within about 8 ms
	// of its Update (a frame of the default 60 was most of the delay).
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(o.Input), tea.WithOutput(out), tea.WithFPS(fps)}
	if o.Width > 0 && o.Height > 0 {
		opts = append(opts, tea.WithWindowSize(o.Width, o.Height))
	}
	p := tea.NewProgram(m, opts...)
	// The client's reader queues events in the inbox, which wakes the
	// program once per batch (a full inbox holds the reader back).
	box := newInbox(func(msg eventsMsg) { p.Send(msg) })
	m.box = box
	c := acpclient.New(o.Transport, box.put)
	m.c = c
	// A connection the agent ends (a daemon that stopped) ends the
	// client, saying so.
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-c.Done():
			p.Send(lostMsg{c.Err()})
		case <-done:
		}
	}()
	_, err := p.Run()
	box.close()
	close(done)
	_ = c.Close() // the program's end ends the connection
	<-watched
	switch {
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil, errors.Is(err, tea.ErrInterrupted):
		err = nil
	case err != nil:
		return fmt.Errorf("terminal: %w", err)
	}
	return m.fatal
}

// fps is how many frames a second the renderer draws at most;
// frameTime is one frame.
const (
	fps       = 120
	frameTime = time.Second / fps
)

// watchFirstWrite wraps the terminal's output: the channel is closed at
// its first write. A terminal stays one (its Fd), so that the program
// still reads its size and sets its modes.
func watchFirstWrite(w io.Writer) (io.Writer, <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	mark := func() { once.Do(func() { close(ch) }) }
	if f, ok := w.(ttyFile); ok {
		return &firstWriteFile{ttyFile: f, mark: mark}, ch
	}
	return &firstWrite{Writer: w, mark: mark}, ch
}

// ttyFile is what the program takes for a terminal.
type ttyFile interface {
	io.ReadWriteCloser
	Fd() uintptr
}

type firstWrite struct {
	io.Writer
	mark func()
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.mark()
	return w.Writer.Write(p)
}

type firstWriteFile struct {
	ttyFile
	mark func()
}

func (w *firstWriteFile) Write(p []byte) (int, error) {
	w.mark()
	return w.ttyFile.Write(p)
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/boundlog"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// printSignalGrace bounds how long print mode, once interrupted, waits
// for its output to be taken.
const printSignalGrace = 2 * time.Second

// printMode runs one prompt, the -p text. Plain: the answer's text on
// stdout, errors on stderr. --json: every event as one NDJSON line, ending
// with done. The exit status is 1 when the prompt failed, 130/143 when
// interrupted.
func printMode(ctx context.Context, cmd *cli.Command, prompt string, io streams) error {
	cfg, err := runtimeConfig(cmd, io.err)
	if err != nil {
		return err
	}
	host, sess, err := startSession(cfg, io.err)
	if err != nil {
		return err
	}
	// What extensions push (notices; print mode shows no panels) goes to
	// stderr, one line each; what zot logged there already is left out.
	// The sink is called while the session stamps its events: the lines
	// are written from a goroutine of their own, so a stderr nobody reads
	// never holds up the answer (past a bound they are dropped, counted).
	notices := boundlog.NewAsync(io.err, 0)
	defer func() {
		if ctx.Err() == nil {
			notices.Close() // what waits is written before zot exits (not after a signal)
		}
	}()
	sess.SetNoticeSink(engine.NoticeSink{Send: func(n engine.Notice) {
		e, ok := n.Event.(*wire.ExtNotifyEvent)
		if !ok || n.Logged {
			return
		}
		fmt.Fprintf(notices, "[%s] %s: %s\n", e.Extension, e.Level, oneLineText(e.Message))
	}})
	p := &printer{out: bufio.NewWriterSize(io.out, 32<<10), asJSON: cmd.Bool("json"), endsWithText: true}
	events := engine.NewSubscription[wire.Event](engine.SubscribeOptions{Policy: engine.Block})
	err = sess.Submit(engine.Work{Ctx: ctx, Prompt: &engine.PromptInput{Text: prompt}, Events: events}, engine.RefuseBusy, nil)
	if err != nil {
		host.Close()
		return &exitError{code: 1, msg: err.Error()}
	}
	// The events are printed as they come, outside the session's locks: a
	// slow stdout makes the work wait for room, and holds nothing else
	// up. The done is written last, once the session has stopped.
	var done wire.Event
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for {
			ev, err := events.Next(context.Background())
			if err != nil {
				return // after the done: the session ends the events there
			}
			if _, last := ev.(*wire.DoneEvent); last {
				done = ev
				return
			}
			p.event(ev)
		}
	}()
	select {
	case <-printed:
	case <-ctx.Done():
		// Interrupted: the work is aborting. A stdout nobody reads can hold
		// the printer in a write; after a short grace zot goes anyway (its
		// tools die with it).
		select {
		case <-printed:
		case <-time.After(printSignalGrace):
			stop, cancel := context.WithTimeout(context.Background(), printSignalGrace)
			defer cancel()
			_ = sess.StopExtensions(stop)
			return &exitError{code: 128 + signalNumber(ctx)}
		}
	}
	host.Close() // the session's extensions and MCP servers stop with it
	p.event(done)
	if !p.asJSON && !p.endsWithText {
		p.out.WriteString("\n")
	}
	p.out.Flush()
	switch {
	case p.aborted && ctx.Err() != nil:
		return &exitError{code: 128 + signalNumber(ctx)}
	case p.failure != "":
		if p.asJSON {
			return &exitError{code: 1}
		}
		return &exitError{code: 1, msg: p.failure}
	}
	return nil
}

// printer writes print mode's output as the events come, one event at a
// time.
type printer struct {
	out          *bufio.Writer
	asJSON       bool
	line         []byte
	failure      string
	aborted      bool
	endsWithText bool // the text written so far ends with a newline (or there is none)
	wroteText    bool // some answer text was written
	newMessage   bool // the next text starts a new assistant message
}

func (p *printer) event(ev wire.Event) {
	if _, child := ev.(*wire.ChildEvent); child {
		// A sub-agent's events are for the clients that ask for them
		// (zot rpc's hello); the task call's progress and result say
		// what it did.
		return
	}
	if p.asJSON {
		p.line = append(ev.AppendJSON(p.line[:0]), '\n')
		p.out.Write(p.line)
		p.out.Flush()
	}
	switch e := ev.(type) {
	case *wire.AssistantStartEvent:
		// Each assistant message of the answer starts on a paragraph of
		// its own: the text after a tool call is not glued to the text
		// before it.
		p.newMessage = p.wroteText
	case *wire.TextDeltaEvent:
		if !p.asJSON && e.Delta != "" {
			if p.newMessage {
				p.newMessage = false
				if p.endsWithText {
					p.out.WriteString("\n")
				} else {
					p.out.WriteString("\n\n")
				}
			}
			p.wroteText = true
			p.out.WriteString(e.Delta)
			p.endsWithText = len(e.Delta) > 0 && e.Delta[len(e.Delta)-1] == '\n'
			p.out.Flush()
		}
	case *wire.ErrorEvent:
		p.failure = e.Message
	case *wire.TurnEndEvent:
		switch e.Stop {
		case wire.StopAborted:
			p.aborted = true
		case wire.StopRefusal:
			// No answer was given: say why, and end with status 1.
			p.failure = "the model refused to answer"
			if e.Reason != "" {
				p.failure += ": " + e.Reason
			}
		}
	}
}

// signalNumber returns the number of the signal that ended ctx, SIGINT
// when none was recorded.
func signalNumber(context.Context) int {
	if n := received.Load(); n != 0 {
		return int(n)
	}
	return int(syscall.SIGINT)
}

// oneLineText keeps a notice on one line of stderr.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

package main

import (
	"bufio"
	"context"
	"syscall"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// printMode runs one prompt. Plain: the answer's text on stdout, errors on
// stderr. --json: every event as one NDJSON line, ending with done. The
// exit status is 1 when the prompt failed, 130/143 when interrupted.
func printMode(ctx context.Context, cmd *cli.Command, io streams) error {
	cfg, err := runtimeConfig(cmd)
	if err != nil {
		return err
	}
	rt, err := sdk.New(cfg)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer rt.Close()
	events, err := rt.Prompt(ctx, cmd.String("print"), nil)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	asJSON := cmd.Bool("json")
	out := bufio.NewWriterSize(io.out, 32<<10)
	defer out.Flush()
	var failure string
	aborted := false
	endsWithText := true
	var line []byte
	for ev := range events {
		if asJSON {
			line = append(ev.AppendJSON(line[:0]), '\n')
			out.Write(line)
			if len(events) == 0 {
				out.Flush()
			}
		}
		switch e := ev.(type) {
		case *wire.TextDeltaEvent:
			if !asJSON {
				out.WriteString(e.Delta)
				endsWithText = len(e.Delta) > 0 && e.Delta[len(e.Delta)-1] == '\n'
				if len(events) == 0 {
					out.Flush()
				}
			}
		case *wire.ErrorEvent:
			failure = e.Message
		case *wire.TurnEndEvent:
			if e.Stop == wire.StopAborted {
				aborted = true
			}
		}
	}
	if !asJSON && !endsWithText {
		out.WriteString("\n")
	}
	out.Flush()
	switch {
	case aborted && ctx.Err() != nil:
		return &exitError{code: 128 + signalNumber(ctx)}
	case failure != "":
		if asJSON {
			return &exitError{code: 1}
		}
		return &exitError{code: 1, msg: failure}
	}
	return nil
}

// signalNumber returns the number of the signal that ended ctx, SIGINT
// when none was recorded.
func signalNumber(context.Context) int {
	if n := received.Load(); n != 0 {
		return int(n)
	}
	return int(syscall.SIGINT)
}

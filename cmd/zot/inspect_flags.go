package main

import "github.com/urfave/cli/v3"

// defaultInspectRing is --inspect-ring's default, tap.DefaultPerSession
// (a test of the full build holds them equal): the flags are the same in
// the lean build, which does not link the tap.
const defaultInspectRing = 2000

// inspectFlags turn on the traffic inspector of zot rpc and zot acp
// (docs/inspect.md), on a listener of its own; local ones are a
// command's own (zot acp's), the others the root's (zot rpc's).
func inspectFlags(local bool) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "inspect", Local: local, Usage: "serve the traffic inspector's page at http://ADDR/inspect (a loopback address, e.g. 127.0.0.1:0); the address with its token is printed on stderr (see docs/inspect.md)"},
		inspectRingFlag(local),
	}
}

// daemonInspectFlags turn on zot daemon's inspector: on its --listen
// listeners, else on a loopback listener of its own.
func daemonInspectFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "inspect", Local: true, Usage: "serve the traffic inspector's page at /inspect on the --listen listeners (behind their tokens), or without --listen on a loopback listener of its own (--inspect-addr); the page's address is printed on stderr (see docs/inspect.md)"},
		&cli.StringFlag{Name: "inspect-addr", Value: "127.0.0.1:0", Local: true, Usage: "with --inspect: the loopback address of the page's own listener, used without --listen and, when the listeners take tokens, for a browser (which cannot send a bearer token)"},
		inspectRingFlag(true),
	}
}

func inspectRingFlag(local bool) cli.Flag {
	return &cli.IntFlag{Name: "inspect-ring", Value: defaultInspectRing, Local: local, Usage: "with --inspect: how many records (frames and calls) are kept per session"}
}

//go:build zotlean

package main

import (
	"context"
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
)

// The lean build (full.go): what it leaves out is reached only through
// the full build, which main starts first (becomeFull), so these stand-ins
// answer only a command line needsFull misjudged, with an error naming
// the full build.

// leanBuild reports whether this is the lean build.
const leanBuild = true

func notInLean(what string) error {
	return &exitError{code: 2, msg: what + " is in the full build of zot only (" + fullBinary + ", beside zot; go install zot.dev/zot/cmd/zot builds a zot with everything)"}
}

func runTerminal(context.Context, *cli.Command, streams) error {
	return notInLean("the terminal client")
}

func attach(context.Context, *cli.Command, streams) error {
	return notInLean("zot attach")
}

// listeners: the lean build has none.
type listeners struct{ servers []jsonrpc.Listener }

func openListeners(cmd *cli.Command, _ int, _ io.Writer) (*listeners, error) {
	for _, n := range listenFlagNames {
		if cmd.IsSet(n) {
			return nil, notInLean("--" + n)
		}
	}
	return &listeners{}, nil
}

func (*listeners) reload(io.Writer)            {}
func (*listeners) jsonrpc() []jsonrpc.Listener { return nil }
func (*listeners) setReady(bool)               {}
func (*listeners) close()                      {}

// inspector: the lean build has none; newInspector refuses --inspect.
type inspector struct{ tap leanTap }

type leanTap struct{}

type leanConn struct{}

func (leanTap) RPC(string, string, func() string) leanConn { return leanConn{} }

func (leanTap) JSONRPC(jsonrpc.Peer) (func(jsonrpc.Traffic), func()) { return nil, func() {} }

func (leanConn) Frame(bool, time.Time, []byte) {}

func (leanConn) End() {}

func newInspector(cmd *cli.Command, on bool, _ io.Writer) (*inspector, error) {
	if on || cmd.IsSet("inspect-ring") || cmd.IsSet("inspect-addr") {
		return nil, notInLean("--inspect")
	}
	return nil, nil
}

func startInspector(cmd *cli.Command, log io.Writer) (*inspector, error) {
	return newInspector(cmd, cmd.String("inspect") != "", log)
}

func (*inspector) host(*engine.HostConfig) {}

func (*inspector) close() {}

func (*inspector) mountDaemon(*listeners, string) error { return nil }

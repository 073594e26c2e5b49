package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/inspect"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/tap"
)

// inspectFlags turn on the traffic inspector (docs/inspect.md).
func inspectFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "inspect", Usage: "serve the traffic inspector's page at http://ADDR/inspect (a loopback address, e.g. 127.0.0.1:0); the address with its token is printed on stderr (see docs/inspect.md)"},
		&cli.IntFlag{Name: "inspect-ring", Value: tap.DefaultPerSession, Usage: "with --inspect: how many records (frames and calls) are kept per session"},
	}
}

// inspector is a tap and the page that shows it, on a listener of its
// own.
type inspector struct {
	tap  *tap.Tap
	srv  *http.Server
	done chan struct{}
	wg   sync.WaitGroup
}

// startInspector starts the inspector when --inspect is set (nil
// otherwise): a tap keeping --inspect-ring records per session, its page
// on a loopback listener at that address, behind a random token that is
// printed on log with the page's address.
func startInspector(cmd *cli.Command, log io.Writer) (*inspector, error) {
	addr := cmd.String("inspect")
	if addr == "" {
		if cmd.IsSet("inspect-ring") {
			return nil, usagef("--inspect-ring applies only with --inspect")
		}
		return nil, nil
	}
	ring := cmd.Int("inspect-ring")
	if ring < 1 {
		return nil, usagef("--inspect-ring must be at least 1, got %d", ring)
	}
	if err := loopbackOnly(addr); err != nil {
		return nil, usagef("--inspect %s: %v", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("--inspect: %v", err)}
	}
	var secret [16]byte
	_, _ = rand.Read(secret[:])
	token := hex.EncodeToString(secret[:])
	in := &inspector{tap: tap.New(tap.Options{PerSession: ring}), done: make(chan struct{})}
	in.srv = &http.Server{
		Handler:           inspect.Handler(inspect.Options{Tap: in.tap, Token: token, Done: in.done, Log: log}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		if err := in.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(log, "zot: inspector: %v\n", err)
		}
	}()
	fmt.Fprintf(log, "zot: inspector at http://%s%s?token=%s\n", ln.Addr(), inspect.Prefix, token)
	return in, nil
}

// loopbackOnly refuses an address that is not on a loopback interface:
// the page shows everything the agent reads and writes.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return errors.New("the inspector listens on a loopback address only (127.0.0.1, [::1] or localhost)")
	}
	return nil
}

// host adds the tap to a host's configuration: the model and tool calls
// of each session, and the HTTP exchanges of its provider.
func (in *inspector) host(hc *engine.HostConfig) {
	hc.SessionMiddleware = func(s *engine.Session) ([]agent.ModelMiddleware, []agent.ToolMiddleware) {
		return in.tap.Middleware(func() string { return rpcSessionName(s) })
	}
	base := hc.HTTPClient
	if base == nil {
		base = httpcall.DefaultClient()
	}
	hc.HTTPClient = in.tap.HTTPClient(base)
}

// stop ends the live streams and the listener.
func (in *inspector) stop() {
	close(in.done)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := in.srv.Shutdown(ctx); err != nil {
		_ = in.srv.Close()
	}
	in.wg.Wait()
}

//go:build !zotlean

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
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/inspect"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/tap"
	"zot.dev/zot/internal/wsserve"
)

// inspector is a tap and the pages that show it: on a listener of its
// own, and mounted on the daemon's listeners.
type inspector struct {
	tap  *tap.Tap
	log  io.Writer
	done chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	srvs []*http.Server
	stop sync.Once
}

// newInspector returns the inspector when the command's --inspect asks
// for one (nil otherwise), keeping --inspect-ring records per session.
// It serves nothing yet (serve, mount).
func newInspector(cmd *cli.Command, on bool, log io.Writer) (*inspector, error) {
	if !on {
		for _, n := range []string{"inspect-ring", "inspect-addr"} {
			if cmd.IsSet(n) {
				return nil, usagef("--%s applies only with --inspect", n)
			}
		}
		return nil, nil
	}
	ring := cmd.Int("inspect-ring")
	if ring < 1 {
		return nil, usagef("--inspect-ring must be at least 1, got %d", ring)
	}
	return &inspector{tap: tap.New(tap.Options{PerSession: ring}), log: log, done: make(chan struct{})}, nil
}

// startInspector is zot rpc's and zot acp's: --inspect ADDR, the page on
// a loopback listener there, its address and token printed on log.
func startInspector(cmd *cli.Command, log io.Writer) (*inspector, error) {
	addr := cmd.String("inspect")
	in, err := newInspector(cmd, addr != "", log)
	if in == nil || err != nil {
		return nil, err
	}
	if err := in.serve("--inspect", addr); err != nil {
		return nil, err
	}
	return in, nil
}

// newToken is a random token for a page's own listener.
func newToken() string {
	var secret [16]byte
	_, _ = rand.Read(secret[:])
	return hex.EncodeToString(secret[:])
}

// serve serves the page on a loopback listener of its own at addr,
// behind a random token printed with the page's address.
func (in *inspector) serve(flag, addr string) error {
	if err := loopbackOnly(addr); err != nil {
		return usagef("%s %s: %v", flag, addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("%s: %v", flag, err)}
	}
	token := newToken()
	srv := &http.Server{Handler: in.handler(inspect.Options{Token: token}), ReadHeaderTimeout: 10 * time.Second}
	in.run(srv, ln)
	fmt.Fprintf(in.log, "zot: inspector at http://%s%s?token=%s\n", ln.Addr(), inspect.Prefix, token)
	return nil
}

// handler is the page over the tap, with opts' authentication.
func (in *inspector) handler(opts inspect.Options) http.Handler {
	opts.Tap, opts.Done, opts.Log = in.tap, in.done, in.log
	return inspect.Handler(opts)
}

func (in *inspector) run(srv *http.Server, ln net.Listener) {
	in.mu.Lock()
	in.srvs = append(in.srvs, srv)
	in.mu.Unlock()
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(in.log, "zot: inspector: %v\n", err)
		}
	}()
}

// mountDaemon puts the page on zot daemon's --listen listeners, at
// /inspect behind the same checks as /acp. With a token file, a request
// those checks let through (a token of the file) is the page's; a
// browser, which cannot send a bearer token, gets the page on a loopback
// listener of its own at addr. Without one, the page wants a random
// token of its own, printed with each address.
func (in *inspector) mountDaemon(ls *listeners, addr string) error {
	if len(ls.servers) == 0 {
		return in.serve("--inspect-addr", addr)
	}
	var h http.Handler
	if ls.tokens != nil {
		// The page shows every principal's traffic (prompts, files,
		// answers): an admin token's holder may see it, another's not.
		page := in.handler(inspect.Options{Trust: func(r *http.Request) bool {
			p, ok := wsserve.PrincipalOf(r)
			return ok && p.Admin
		}})
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p, ok := wsserve.PrincipalOf(r); !ok || !p.Admin {
				http.Error(w, "forbidden: the inspector shows every principal's traffic; it takes an admin token of the token file", http.StatusForbidden)
				return
			}
			page.ServeHTTP(w, r)
		})
	} else {
		token := newToken()
		h = in.handler(inspect.Options{Token: token})
		for _, s := range ls.servers {
			fmt.Fprintf(in.log, "zot: inspector at %s?token=%s\n", pageURL(s.Addr()), token)
		}
	}
	for _, s := range ls.servers {
		s.Handle(inspect.Prefix, h)
		s.Handle(inspect.Prefix+"/", h)
	}
	if ls.tokens != nil {
		for _, s := range ls.servers {
			fmt.Fprintf(in.log, "zot: inspector's data at %s/api/ (Authorization: Bearer, a token of %s)\n", pageURL(s.Addr()), ls.tokens.Path())
		}
		return in.serve("--inspect-addr", addr)
	}
	return nil
}

// pageURL is the page's address on a listener whose ACP endpoint is
// ws(s)://host:port/acp.
func pageURL(acp string) string {
	u := strings.TrimSuffix(acp, "/acp") + inspect.Prefix
	if rest, ok := strings.CutPrefix(u, "wss://"); ok {
		return "https://" + rest
	}
	return "http://" + strings.TrimPrefix(u, "ws://")
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
	inner := hc.SessionMiddleware // kept, inside the tap's
	hc.SessionMiddleware = func(s *engine.Session) ([]agent.ModelMiddleware, []agent.ToolMiddleware) {
		model, tool := in.tap.Middleware(func() string { return rpcSessionName(s) })
		if inner != nil {
			m, t := inner(s)
			model, tool = append(model, m...), append(tool, t...)
		}
		return model, tool
	}
	base := hc.HTTPClient
	if base == nil {
		base = httpcall.DefaultClient()
	}
	hc.HTTPClient = in.tap.HTTPClient(base)
}

// close ends the live streams and the page's own listeners (those
// mounted on the daemon's listeners end with them).
func (in *inspector) close() {
	in.stop.Do(func() {
		close(in.done)
		in.mu.Lock()
		srvs := in.srvs
		in.mu.Unlock()
		for _, srv := range srvs {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := srv.Shutdown(ctx); err != nil {
				_ = srv.Close()
			}
			cancel()
		}
		in.wg.Wait()
	})
}

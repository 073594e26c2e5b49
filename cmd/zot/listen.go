package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/wsserve"
)

// listenFlags are zot daemon's flags of its WebSocket listeners.
func listenFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "listen", Local: true,
			Usage: "also serve ACP over WebSocket at ws://HOST:PORT (or wss:// with --tls-cert/--tls-key), endpoint /acp; repeatable (docs/daemon.md, Remote clients)"},
		&cli.StringFlag{Name: "tls-cert", Local: true, Usage: "PEM certificate (chain) of the wss:// listeners; reloaded on SIGHUP"},
		&cli.StringFlag{Name: "tls-key", Local: true, Usage: "PEM private key of --tls-cert; reloaded on SIGHUP"},
		&cli.StringFlag{Name: "token-file", Local: true,
			Usage: "bearer tokens of the listeners, one principal a line: NAME TOKEN [admin] (# comments; mode 0600); reloaded on SIGHUP"},
		&cli.StringSliceFlag{Name: "allow-origin", Local: true,
			Usage: "an origin (scheme://host[:port]) whose browser requests the listeners serve; others with an Origin header get 403; repeatable"},
		&cli.BoolFlag{Name: "insecure-listen", Local: true,
			Usage: "serve a non-loopback --listen without tokens or without TLS (anyone who reaches the port gets shell access as this user)"},
		&cli.IntFlag{Name: "max-connections", Value: wsserve.DefaultMaxConnections, Local: true,
			Usage: "open WebSocket connections per principal; one more is refused with 429"},
		&cli.IntFlag{Name: "max-sessions", Value: 64, Local: true,
			Usage: "sessions one principal of the listeners may have open at once; one more is refused with limit_exceeded (the daemon's own user is not counted)"},
		&cli.DurationFlag{Name: "reconnect-grace", Value: 30 * time.Second, Local: true,
			Usage: "how long a turn whose listener client left waits for a client of its principal to resume the session and answer a permission question (0: rejected at once)"},
		&cli.DurationFlag{Name: "keepalive", Value: wsserve.DefaultPingInterval, Local: true,
			Usage: "how often the listeners ping each client; no pong within it closes the connection (1008); 0 turns it off"},
		&cli.DurationFlag{Name: "handshake-timeout", Value: wsserve.DefaultHandshakeTimeout, Local: true,
			Usage: "how long a WebSocket client may take to send initialize before it is closed (1008)"},
	}
}

// listenFlagNames are the names listenFlags defines.
var listenFlagNames = []string{"listen", "tls-cert", "tls-key", "token-file", "allow-origin", "insecure-listen",
	"max-connections", "max-sessions", "reconnect-grace", "keepalive", "handshake-timeout"}

// listeners are zot daemon's WebSocket endpoints and what they share.
type listeners struct {
	servers []*wsserve.Server
	tokens  *wsserve.Tokens
	cert    *certReloader
}

// openListeners checks the flags and takes every --listen address. Off
// loopback it refuses to serve without tokens and TLS unless
// --insecure-listen, which it warns about at every start.
func openListeners(cmd *cli.Command, maxMessage int, log io.Writer) (*listeners, error) {
	urls := cmd.StringSlice("listen")
	for _, n := range listenFlagNames[1:] {
		if cmd.IsSet(n) && len(urls) == 0 {
			return nil, usagef("--%s applies to the --listen listeners; give --listen ws://HOST:PORT", n)
		}
	}
	if len(urls) == 0 {
		return &listeners{}, nil
	}
	ls := &listeners{}
	if f := cmd.String("token-file"); f != "" {
		t, err := wsserve.LoadTokens(f)
		if err != nil {
			return nil, usagef("--token-file: %v", err)
		}
		ls.tokens = t
	}
	certFile, keyFile := cmd.String("tls-cert"), cmd.String("tls-key")
	if (certFile == "") != (keyFile == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	var tlsConf *tls.Config
	if certFile != "" {
		c, err := newCertReloader(certFile, keyFile)
		if err != nil {
			return nil, usagef("%v", err)
		}
		ls.cert = c
		if st, err := os.Stat(keyFile); err == nil && st.Mode().Perm()&0o007 != 0 {
			fmt.Fprintf(log, "zot daemon: WARNING: the TLS key %s may be read by every user (mode %04o): chmod 600 %s\n", keyFile, st.Mode().Perm(), keyFile)
		}
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.get}
	}
	if cmd.Int("max-connections") < 1 {
		return nil, usagef("--max-connections must be at least 1")
	}
	if cmd.Int("max-sessions") < 1 {
		return nil, usagef("--max-sessions must be at least 1")
	}
	keepalive := cmd.Duration("keepalive")
	if keepalive < 0 {
		return nil, usagef("--keepalive must not be negative")
	}
	if keepalive == 0 {
		keepalive = -1
	}
	if cmd.Duration("handshake-timeout") <= 0 {
		return nil, usagef("--handshake-timeout must be positive")
	}
	insecure := cmd.Bool("insecure-listen")
	for _, u := range urls {
		if wsserve.IsLoopback(u) {
			continue
		}
		var missing []string
		if ls.tokens == nil {
			missing = append(missing, "no --token-file")
		}
		if tlsConf == nil {
			missing = append(missing, "no TLS (--tls-cert, --tls-key, wss://)")
		}
		if len(missing) == 0 {
			continue
		}
		if !insecure {
			return nil, usagef("--listen %s is reachable from other machines but has %s: whoever reaches it would run commands as this user. "+
				"Give both, or listen on 127.0.0.1, or pass --insecure-listen if something in front of zot does both", u, joinAnd(missing))
		}
		fmt.Fprintf(log, "zot daemon: WARNING: %s is reachable from other machines with %s (--insecure-listen): "+
			"anyone who reaches it can run commands as this user unless something in front of zot authenticates and encrypts\n", u, joinAnd(missing))
	}
	for _, u := range urls {
		s, err := wsserve.Listen(wsserve.Config{
			URL:              u,
			TLS:              tlsConf,
			Tokens:           ls.tokens,
			AllowOrigins:     cmd.StringSlice("allow-origin"),
			MaxMessageBytes:  int64(maxMessage),
			HandshakeTimeout: cmd.Duration("handshake-timeout"),
			PingInterval:     keepalive,
			MaxConnections:   cmd.Int("max-connections"),
			Log:              log,
		})
		if err != nil {
			ls.close()
			return nil, &exitError{code: 1, msg: "zot daemon: " + err.Error()}
		}
		ls.servers = append(ls.servers, s)
	}
	if ls.tokens == nil {
		fmt.Fprintf(log, "zot daemon: the --listen endpoints take no token (no --token-file): every local user who reaches them is admitted as \"anonymous\"\n")
	}
	return ls, nil
}

// reload reads the token file and the certificate again (SIGHUP). On an
// error what is in use stays.
func (ls *listeners) reload(log io.Writer) {
	if ls.tokens != nil {
		if err := ls.tokens.Reload(); err != nil {
			fmt.Fprintf(log, "zot daemon: SIGHUP: keeping the tokens in use: %v\n", err)
		} else {
			fmt.Fprintf(log, "zot daemon: SIGHUP: reloaded %d tokens from %s\n", ls.tokens.Len(), ls.tokens.Path())
		}
	}
	if ls.cert != nil {
		if err := ls.cert.load(); err != nil {
			fmt.Fprintf(log, "zot daemon: SIGHUP: keeping the certificate in use: %v\n", err)
		} else {
			fmt.Fprintf(log, "zot daemon: SIGHUP: reloaded the certificate %s\n", ls.cert.certFile)
		}
	}
}

// jsonrpc returns the servers as the daemon's listeners.
func (ls *listeners) jsonrpc() []jsonrpc.Listener {
	out := make([]jsonrpc.Listener, len(ls.servers))
	for i, s := range ls.servers {
		out[i] = s
	}
	return out
}

func (ls *listeners) setReady(ok bool) {
	for _, s := range ls.servers {
		s.SetReady(ok)
	}
}

func (ls *listeners) close() {
	for _, s := range ls.servers {
		_ = s.Close()
	}
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

// certReloader holds the listeners' certificate, read again on SIGHUP.
type certReloader struct {
	certFile, keyFile string
	mu                sync.RWMutex
	cert              *tls.Certificate
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", c.certFile, c.keyFile, err)
	}
	c.mu.Lock()
	c.cert = &cert
	c.mu.Unlock()
	return nil
}

func (c *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cert, nil
}

//go:build !zotlean

package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/wsserve"
)

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

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

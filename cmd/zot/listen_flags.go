package main

import (
	"time"

	"github.com/urfave/cli/v3"
)

// The listeners' defaults, wsserve's (a test of the full build holds them
// equal): the flags are the same in the lean build, which does not link
// wsserve.
const (
	defaultMaxConnections   = 32
	defaultKeepalive        = 30 * time.Second
	defaultHandshakeTimeout = 10 * time.Second
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
		&cli.IntFlag{Name: "max-connections", Value: defaultMaxConnections, Local: true,
			Usage: "open WebSocket connections per principal; one more is refused with 429"},
		&cli.IntFlag{Name: "max-sessions", Value: 64, Local: true,
			Usage: "sessions one principal of the listeners may have open at once; one more is refused with limit_exceeded (the daemon's own user is not counted)"},
		&cli.DurationFlag{Name: "reconnect-grace", Value: 30 * time.Second, Local: true,
			Usage: "how long a turn whose listener client left waits for a client of its principal to resume the session and answer a permission question (0: rejected at once)"},
		&cli.DurationFlag{Name: "keepalive", Value: defaultKeepalive, Local: true,
			Usage: "how often the listeners ping each client; no pong within it closes the connection (1008); 0 turns it off"},
		&cli.DurationFlag{Name: "handshake-timeout", Value: defaultHandshakeTimeout, Local: true,
			Usage: "how long a WebSocket client may take to send initialize before it is closed (1008)"},
	}
}

// listenFlagNames are the names listenFlags defines.
var listenFlagNames = []string{"listen", "tls-cert", "tls-key", "token-file", "allow-origin", "insecure-listen",
	"max-connections", "max-sessions", "reconnect-grace", "keepalive", "handshake-timeout"}

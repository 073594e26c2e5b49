// Package wsserve serves the daemon's Agent Client Protocol over
// WebSocket, as the ACP transport RFD ("Streamable HTTP & WebSocket
// Transport") profiles it: one endpoint, /acp, where a GET with
// `Upgrade: websocket` opens a connection that carries one JSON-RPC
// message per text message, the first of which must be initialize.
// Streamable HTTP is not offered (the RFD lets a server offer WebSocket
// only); /healthz and /readyz answer probes.
//
// A Server is a jsonrpc.Listener: the daemon serves its connections as it
// serves the Unix socket's, with the same dispatch, ordering, bounded
// queue and stall rule. What is particular to a network listener is
// here: bearer tokens (Tokens) that name a principal, Origin checks,
// per-principal connection caps, the message size limit, a handshake
// deadline and ping/pong keepalive, TLS. Handle mounts further HTTP
// handlers behind the same checks.
//
// The wire, the close codes and the security model are in docs/daemon.md
// ("Remote clients").
package wsserve

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"zot.dev/zot/internal/jsonrpc"
)

// Defaults of Config.
const (
	DefaultMaxMessageBytes  = 16 << 20
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultPingInterval     = 30 * time.Second
	DefaultMaxConnections   = 32
)

// Subprotocol is the WebSocket subprotocol the server selects when the
// client offers it. A client that cannot set headers (a browser) sends
// its token as a second offered subprotocol, TokenSubprotocolPrefix
// followed by the token; the server never selects or echoes that one.
const (
	Subprotocol            = "acp"
	TokenSubprotocolPrefix = "bearer."
)

// ConnectionIDHeader is the header of the 101 answer that names the
// connection, as the RFD asks (Acp-Connection-Id); it also labels the
// connection in the daemon's log.
const ConnectionIDHeader = "Acp-Connection-Id"

// Config configures a Server.
type Config struct {
	// URL is what to listen on: ws://host:port, or wss://host:port with
	// TLS set. Port 0 takes a free port (Addr says which).
	URL string
	// TLS, when set, serves TLS (wss://); its certificates are the
	// caller's (GetCertificate may reload them).
	TLS *tls.Config
	// Tokens, when set, is required: every request but the probes must
	// carry a token of it. nil admits every client as the principal
	// "anonymous" (refused by the daemon off loopback unless insecure).
	Tokens *Tokens
	// AllowOrigins lists the origins (scheme://host[:port]) whose
	// requests are served; a request with any other Origin header is
	// refused with 403. A request without Origin (not from a browser) is
	// served.
	AllowOrigins []string
	// MaxMessageBytes bounds one incoming message; a longer one closes
	// the connection with 1009 before more than the limit is read. 0
	// means DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// HandshakeTimeout is how long a connection may stay without its
	// initialize; 0 means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// PingInterval is how often the server pings each connection; one
	// not answered within the interval closes it (1008). 0 means
	// DefaultPingInterval; negative turns keepalive off.
	PingInterval time.Duration
	// MaxConnections bounds the open connections of one principal; one
	// more is refused with 429. 0 means DefaultMaxConnections.
	MaxConnections int
	// Log receives the server's log lines; nil discards them.
	Log io.Writer
}

// Server is a WebSocket endpoint yielding ACP connections: a
// jsonrpc.Listener.
type Server struct {
	cfg    Config
	ln     net.Listener
	srv    *http.Server
	mux    *http.ServeMux
	scheme string
	log    io.Writer

	accepted chan accepted
	closing  chan struct{}
	served   chan struct{} // closed when srv.Serve returned
	ready    atomic.Bool
	close    sync.Once

	mu    sync.Mutex
	conns map[string]int          // open connections by principal
	live  map[*transport]struct{} // not yet closed
}

type accepted struct {
	t    *transport
	peer jsonrpc.Peer
}

// Listen checks cfg, takes the address and starts serving HTTP on it.
// Connections wait for Accept; /readyz says 503 until SetReady(true).
func Listen(cfg Config) (*Server, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.URL, err)
	}
	switch {
	case u.Scheme != "ws" && u.Scheme != "wss":
		return nil, fmt.Errorf("--listen %s: the scheme must be ws:// or wss://", cfg.URL)
	case u.Scheme == "wss" && cfg.TLS == nil:
		return nil, fmt.Errorf("--listen %s: wss:// needs --tls-cert and --tls-key", cfg.URL)
	case u.Scheme == "ws" && cfg.TLS != nil:
		return nil, fmt.Errorf("--listen %s: with --tls-cert and --tls-key, listen on wss://", cfg.URL)
	case u.Port() == "":
		return nil, fmt.Errorf("--listen %s: name the port (ws://127.0.0.1:PORT)", cfg.URL)
	case u.Path != "" && u.Path != "/" && u.Path != "/acp":
		return nil, fmt.Errorf("--listen %s: the endpoint is always /acp; give only the scheme, host and port", cfg.URL)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("--listen %s: give only the scheme, host and port", cfg.URL)
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	for _, o := range cfg.AllowOrigins {
		if _, err := normalOrigin(o); err != nil {
			return nil, fmt.Errorf("--allow-origin %s: %w", o, err)
		}
	}
	logWriter := cfg.Log
	if logWriter == nil {
		logWriter = io.Discard
	}
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.URL, err)
	}
	s := &Server{
		cfg:      cfg,
		ln:       ln,
		mux:      http.NewServeMux(),
		scheme:   u.Scheme,
		log:      logWriter,
		accepted: make(chan accepted),
		closing:  make(chan struct{}),
		served:   make(chan struct{}),
		conns:    map[string]int{},
		live:     map[*transport]struct{}{},
	}
	s.mux.HandleFunc("/healthz", s.healthz)
	s.mux.HandleFunc("/readyz", s.readyz)
	s.mux.Handle("/acp", s.Protect(http.HandlerFunc(s.acp)))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not found: ACP is served at /acp (GET with Upgrade: websocket)", http.StatusNotFound)
	})
	s.srv = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: cfg.HandshakeTimeout,
		IdleTimeout:       cfg.HandshakeTimeout,
		MaxHeaderBytes:    16 << 10,
		// What the HTTP server reports (a failed TLS handshake, say) goes
		// to the daemon's log, not to the process's default logger.
		ErrorLog: log.New(logWriter, "zot daemon: "+u.Scheme+"://"+u.Host+": http: ", 0),
	}
	if cfg.TLS != nil {
		s.srv.TLSConfig = cfg.TLS.Clone()
		// HTTP/2 cannot carry this upgrade (RFC 8441 is not served).
		s.srv.TLSConfig.NextProtos = []string{"http/1.1"}
		ln = tls.NewListener(ln, s.srv.TLSConfig)
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Handle mounts h at pattern (http.ServeMux's syntax) behind the same
// checks as /acp: the Origin rule and, with tokens, a valid token. h
// finds who asked with PrincipalOf. Call it before clients arrive.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, s.Protect(h)) }

// SetReady says whether /readyz answers 200 (serving) or 503.
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// Addr returns the endpoint's URL, ws://host:port/acp with the port
// taken.
func (s *Server) Addr() string {
	return s.scheme + "://" + s.ln.Addr().String() + "/acp"
}

// Accept returns the next connection, once its upgrade is done.
func (s *Server) Accept() (jsonrpc.Transport, jsonrpc.Peer, error) {
	select {
	case a := <-s.accepted:
		return a.t, a.peer, nil
	case <-s.closing:
		return nil, jsonrpc.Peer{}, fmt.Errorf("%s: %w", s.Addr(), net.ErrClosed)
	}
}

// Close stops accepting: the listener closes, requests being upgraded
// are refused, and connections not yet handed to Accept are closed with
// 1001. Requests of handlers mounted with Handle get a second to finish;
// those still running then (a live stream) have their connections closed,
// which ends their contexts. Connections already accepted are their
// Conn's to end (the daemon's shutdown closes them: see GoingAway). It
// may be called more than once.
func (s *Server) Close() error {
	s.close.Do(func() {
		close(s.closing)
		s.ready.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if s.srv.Shutdown(ctx) != nil { // hijacked connections are not its
			_ = s.srv.Close()
		}
		<-s.served
	})
	return nil
}

// GoingAway closes every open connection with 1001, for a daemon that
// stops once its connections had their grace.
func (s *Server) GoingAway() {
	s.mu.Lock()
	live := make([]*transport, 0, len(s.live))
	for t := range s.live {
		live = append(live, t)
	}
	s.mu.Unlock()
	for _, t := range live {
		t.goingAway()
	}
}

// principalKey keys the principal of a request that passed Protect's
// checks in its context.
type principalKey struct{}

// PrincipalOf returns who made r, for a handler mounted with Handle:
// the token's principal, or "anonymous" without tokens.
func PrincipalOf(r *http.Request) (Principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(Principal)
	return p, ok
}

// Protect wraps h with the server's checks: a request with an Origin
// header not in AllowOrigins gets 403; with tokens, a request without a
// valid one gets 401 (WWW-Authenticate: Bearer). A token comes in the
// Authorization header (Bearer) or, for browsers, as an offered
// WebSocket subprotocol bearer.TOKEN.
func (s *Server) Protect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !s.originAllowed(origin) {
			s.logf("refused a request from %s: its Origin %q is not allowed (--allow-origin)", r.RemoteAddr, origin)
			http.Error(w, "forbidden: this Origin is not allowed (the daemon's --allow-origin lists those that are)", http.StatusForbidden)
			return
		}
		p := Principal{Name: "anonymous"}
		if s.cfg.Tokens != nil {
			token, ok := bearer(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="zot"`)
				http.Error(w, "unauthorized: send a token (Authorization: Bearer TOKEN, or the WebSocket subprotocol bearer.TOKEN)", http.StatusUnauthorized)
				return
			}
			if p, ok = s.cfg.Tokens.Lookup(token); !ok {
				s.logf("refused a request from %s: a token that is not in %s", r.RemoteAddr, s.cfg.Tokens.Path())
				w.Header().Set("WWW-Authenticate", `Bearer realm="zot", error="invalid_token"`)
				http.Error(w, "unauthorized: the token is not valid", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// bearer finds the request's token: Authorization: Bearer, else an
// offered subprotocol bearer.TOKEN.
func bearer(r *http.Request) (string, bool) {
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, token, ok := strings.Cut(a, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", false
		}
		token = strings.TrimSpace(token)
		return token, token != ""
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if token, ok := strings.CutPrefix(strings.TrimSpace(p), TokenSubprotocolPrefix); ok && token != "" {
				return token, true
			}
		}
	}
	return "", false
}

func (s *Server) originAllowed(origin string) bool {
	o, err := normalOrigin(origin)
	if err != nil {
		return false
	}
	for _, allowed := range s.cfg.AllowOrigins {
		if a, _ := normalOrigin(allowed); a == o {
			return true
		}
	}
	return false
}

// normalOrigin lower-cases an origin and drops a default port.
func normalOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", errors.New("an origin is scheme://host[:port]")
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host, nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, "ok\n")
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	select {
	case <-s.closing:
		http.Error(w, "stopping", http.StatusServiceUnavailable)
		return
	default:
	}
	if !s.ready.Load() {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "ready\n")
}

// acp serves /acp: the WebSocket upgrade, and the RFD's answers to plain
// HTTP for a server that offers only WebSocket.
func (s *Server) acp(w http.ResponseWriter, r *http.Request) {
	upgrade := r.Method == http.MethodGet && headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
	if !upgrade {
		s.plainHTTP(w, r)
		return
	}
	p, _ := PrincipalOf(r)
	if !s.admit(p.Name) {
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("too many connections: %s has %d open (the limit)", p.Name, s.cfg.MaxConnections), http.StatusTooManyRequests)
		return
	}
	admitted := true
	defer func() {
		if admitted {
			s.leave(p.Name)
		}
	}()
	id := newConnID()
	w.Header().Set(ConnectionIDHeader, id)
	cw := &corkingWriter{ResponseWriter: w}
	ws, err := websocket.Accept(cw, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// Origin was checked by Protect, against --allow-origin.
		InsecureSkipVerify: true,
	})
	if err != nil {
		s.logf("upgrading %s: %v", r.RemoteAddr, err)
		return
	}
	ws.SetReadLimit(s.cfg.MaxMessageBytes)
	var t *transport
	t = newTransport(ws, cw.conn, limits{handshake: s.cfg.HandshakeTimeout, ping: s.cfg.PingInterval}, s.closing, func() {
		s.mu.Lock()
		delete(s.live, t)
		s.mu.Unlock()
		s.leave(p.Name)
	})
	s.mu.Lock()
	s.live[t] = struct{}{}
	s.mu.Unlock()
	admitted = false // the transport gives the place back when it closes
	label := fmt.Sprintf("ws:%s@%s/%s", p.Name, r.RemoteAddr, id[:8])
	peer := jsonrpc.Peer{Transport: "ws", UID: -1, PID: -1, Label: label, Principal: p.Name, Admin: p.Admin}
	select {
	case s.accepted <- accepted{t: t, peer: peer}:
	case <-s.closing:
		t.goingAway()
		t.watch.Wait()
	}
}

// plainHTTP answers a request to /acp that is not a WebSocket upgrade:
// this server offers only the RFD's WebSocket profile, so a GET for an
// SSE stream needs an Acp-Connection-Id (400 without, 404 for any: no
// HTTP connection exists), a DELETE likewise, and a POST (Streamable
// HTTP) is answered 426 Upgrade Required.
func (s *Server) plainHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Upgrade", "websocket")
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		if r.Header.Get(ConnectionIDHeader) == "" {
			http.Error(w, "bad request: this endpoint serves ACP over WebSocket only; open it with GET and Upgrade: websocket", http.StatusBadRequest)
			return
		}
		http.Error(w, "not found: no such connection (this endpoint serves ACP over WebSocket only)", http.StatusNotFound)
	case http.MethodPost:
		w.Header().Set("Connection", "Upgrade")
		http.Error(w, "upgrade required: this endpoint serves ACP over WebSocket only (GET with Upgrade: websocket); Streamable HTTP is not offered", http.StatusUpgradeRequired)
	default:
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed: open /acp with GET and Upgrade: websocket", http.StatusMethodNotAllowed)
	}
}

// headerHas reports whether a comma-separated header lists token.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for p := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), token) {
				return true
			}
		}
	}
	return false
}

// admit takes one of principal's connection places, false when it has
// none left.
func (s *Server) admit(principal string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[principal] >= s.cfg.MaxConnections {
		return false
	}
	s.conns[principal]++
	return true
}

func (s *Server) leave(principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[principal]--; s.conns[principal] <= 0 {
		delete(s.conns, principal)
	}
}

// Connections returns how many connections each principal has open.
func (s *Server) Connections() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.conns))
	for k, v := range s.conns {
		out[k] = v
	}
	return out
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "zot daemon: %s: %s\n", s.Addr(), fmt.Sprintf(format, args...))
}

func newConnID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// IsLoopback reports whether the URL's host is a loopback address (or
// localhost), which a client reaches only from this machine.
func IsLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

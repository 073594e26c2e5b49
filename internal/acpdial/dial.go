// Package acpdial is the client's side of ACP over WebSocket: dialing a
// daemon's `/acp` endpoint with a bearer token ([Dial]), reading a token
// from the flags, the environment or a file ([Token]), and a transport
// that dials again when the connection drops and resumes the sessions
// the client had open ([Redial]).
//
// It serves `zot attach ws://…` and the Go ACP client (sdk/acpclient);
// both see a jsonrpc.Transport and nothing of WebSocket.
package acpdial

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/coder/websocket"

	"zot.dev/zot/internal/jsonrpc"
)

// MaxMessage is the longest message a dialed transport reads (the
// daemon's default --max-line-bytes).
const MaxMessage = 64 << 20

// IsURL reports whether s names a WebSocket endpoint (ws:// or wss://)
// rather than a socket path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "ws://") || strings.HasPrefix(s, "wss://")
}

// Normalize checks a ws:// or wss:// URL and gives it the path /acp when
// it has none.
func Normalize(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("%q: the URL of a daemon's listener starts with ws:// or wss://", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q names no host", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/acp"
	}
	return u.String(), nil
}

// Token returns the bearer token to send: flag when set, else the
// environment variable ZOT_TOKEN, else the token in file (when named): its
// first line that is neither blank nor a `#` comment, either the token
// alone or a line of the daemon's token file (`NAME TOKEN [admin]`,
// whose second word is the token). "" means no token.
func Token(flag, file string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if file == "" {
		return os.Getenv("ZOT_TOKEN"), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the token file: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) >= 2 {
			return f[1], nil
		}
		return f[0], nil
	}
	return "", fmt.Errorf("the token file %s holds no token", file)
}

// Options are how to dial.
type Options struct {
	// Token is sent as `Authorization: Bearer TOKEN`; "" sends none.
	Token string
	// TLS configures wss:// (nil: the system's roots).
	TLS *tls.Config
	// Header is added to the upgrade request.
	Header http.Header
}

// RefusedError is a daemon's refusal of the upgrade request: a missing or
// wrong token (401), an Origin not allowed (403), too many connections
// (429).
type RefusedError struct {
	URL    string
	Status int
	// Why is the daemon's short text, or WWW-Authenticate's error.
	Why string
}

// Error says what was refused and what to do.
func (e *RefusedError) Error() string {
	switch e.Status {
	case http.StatusUnauthorized:
		if strings.Contains(e.Why, "invalid_token") {
			return fmt.Sprintf("%s refused the token (HTTP 401, invalid_token): check --token, ZOT_TOKEN or --token-file against the daemon's token file", e.URL)
		}
		return fmt.Sprintf("%s needs a token (HTTP 401): give one with --token, ZOT_TOKEN or --token-file", e.URL)
	case http.StatusForbidden:
		return fmt.Sprintf("%s refused the request (HTTP 403): %s", e.URL, e.Why)
	case http.StatusTooManyRequests:
		return fmt.Sprintf("%s refused the connection (HTTP 429): this principal has too many connections open", e.URL)
	}
	return fmt.Sprintf("%s refused the connection (HTTP %d): %s", e.URL, e.Status, e.Why)
}

// Dial opens a WebSocket to the ACP endpoint at rawURL (ws:// or wss://;
// the path defaults to /acp) and returns it as a transport carrying one
// JSON-RPC message per text message. A refusal before the upgrade is a
// *RefusedError.
func Dial(ctx context.Context, rawURL string, o Options) (jsonrpc.Transport, error) {
	u, err := Normalize(rawURL)
	if err != nil {
		return nil, err
	}
	hdr := http.Header{}
	for k, v := range o.Header {
		hdr[k] = v
	}
	if o.Token != "" {
		hdr.Set("Authorization", "Bearer "+o.Token)
	}
	opts := &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: []string{"acp"}}
	if o.TLS != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: o.TLS}}
	}
	ws, resp, err := websocket.Dial(ctx, u, opts)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			why := resp.Header.Get("WWW-Authenticate")
			if resp.Body != nil {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				resp.Body.Close()
				if why == "" {
					why = strings.TrimSpace(string(body))
				}
			}
			return nil, &RefusedError{URL: u, Status: resp.StatusCode, Why: why}
		}
		return nil, fmt.Errorf("no zot daemon answers at %s: %w", u, err)
	}
	ws.SetReadLimit(MaxMessage)
	t := &transport{ws: ws}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// transport is a dialed WebSocket as a jsonrpc.Transport.
type transport struct {
	ws     *websocket.Conn
	ctx    context.Context // ends at Close: unblocks Read and Write
	cancel context.CancelFunc
}

// Read returns the next text message; the daemon's normal close is
// io.EOF.
func (t *transport) Read(ctx context.Context) ([]byte, error) {
	typ, msg, err := t.ws.Read(t.ctx)
	if err != nil {
		switch websocket.CloseStatus(err) {
		case websocket.StatusNormalClosure, websocket.StatusGoingAway:
			return nil, io.EOF
		}
		if t.ctx.Err() != nil {
			return nil, jsonrpc.ErrClosed
		}
		return nil, fmt.Errorf("the connection to the daemon dropped: %w", err)
	}
	if typ != websocket.MessageText {
		return nil, errors.New("the daemon sent a binary message; ACP messages are text")
	}
	return msg, nil
}

// Write sends each message of b as a text message.
func (t *transport) Write(ctx context.Context, b *jsonrpc.Batch) error {
	for i := range b.Len() {
		if err := t.ws.Write(t.ctx, websocket.MessageText, b.Message(i)); err != nil {
			return fmt.Errorf("writing to the daemon: %w", err)
		}
	}
	return nil
}

// Close sends a normal close and ends the connection.
func (t *transport) Close() error {
	_ = t.ws.Close(websocket.StatusNormalClosure, "")
	t.cancel()
	return nil
}

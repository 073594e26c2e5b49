// Package inspect serves the traffic inspector: a page at /inspect that
// shows what a tap (internal/tap) records, live, and the JSON endpoints
// it reads. Its assets (plain HTML, JS and CSS) are embedded; nothing is
// fetched from elsewhere and nothing is built at run time.
//
// Every endpoint but the page's own shell and assets wants the token: as
// a bearer token, or as the cookie the page gets once the token is
// passed (?token= on the page's URL, or pasted into its form). A browser
// cannot put an Authorization header on an EventSource, so the cookie
// (HttpOnly, SameSite=Strict, path /inspect) carries it; a request from
// another origin is refused.
//
// What the page gets is redacted as an export is (tap.RedactRecord): API
// keys, tokens, passwords, cookies and Authorization headers never reach
// the browser, live or not; the tap keeps the frames as they crossed.
package inspect

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"zot.dev/zot/internal/tap"
)

//go:embed assets
var assets embed.FS

// Prefix is the path the inspector is served under.
const Prefix = "/inspect"

// cookieName is the cookie that carries the page's authentication.
const cookieName = "zot_inspect"

// Options configures the handler.
type Options struct {
	// Tap is what the page shows.
	Tap *tap.Tap
	// Token is the secret a client presents. Check, when set, is asked
	// instead (a listener with tokens of its own).
	Token string
	Check func(token string) bool
	// Trust, when set, says whether a listener in front of the handler
	// authenticated r already (its own bearer tokens): such a request is
	// served without the inspector's token.
	Trust func(r *http.Request) bool
	// Done ends the live streams (the server is stopping); nil: only
	// their requests' ends do.
	Done <-chan struct{}
	// Heartbeat is how often an idle live stream gets a comment; 0 means
	// 15 s.
	Heartbeat time.Duration
	// Log receives diagnostics; nil discards them.
	Log io.Writer
}

// Handler returns the inspector's handler, for the paths under Prefix.
func Handler(opts Options) http.Handler {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	h := &handler{opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix, h.page)
	mux.HandleFunc("GET "+Prefix+"/{$}", h.page)
	mux.HandleFunc("GET "+Prefix+"/assets/{name}", asset)
	mux.HandleFunc("POST "+Prefix+"/login", h.login)
	mux.HandleFunc("POST "+Prefix+"/logout", h.logout)
	mux.HandleFunc("GET "+Prefix+"/api/snapshot", h.authed(h.snapshot))
	mux.HandleFunc("GET "+Prefix+"/api/live", h.authed(h.live))
	mux.HandleFunc("GET "+Prefix+"/api/export", h.authed(h.export))
	return securityHeaders(mux)
}

type handler struct {
	opts Options
}

// assetTypes are the assets' content types, by name: the page's files
// are few and known (and mime's tables stay out of zot's start).
var assetTypes = [...]struct{ name, typ string }{
	{"app.js", "text/javascript; charset=utf-8"},
	{"app.css", "text/css; charset=utf-8"},
}

// asset serves one of the page's files.
func asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, a := range assetTypes {
		if a.name != name {
			continue
		}
		data, err := assets.ReadFile("assets/" + name)
		if err != nil {
			break
		}
		w.Header().Set("Content-Type", a.typ)
		_, _ = w.Write(data)
		return
	}
	http.NotFound(w, r)
}

// securityHeaders keeps the page to its own origin: its scripts, styles,
// connections and frames.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// valid says whether token is the one the inspector wants.
func (h *handler) valid(token string) bool {
	if token == "" || h.opts.Check == nil && h.opts.Token == "" {
		return false
	}
	if h.opts.Check != nil {
		return h.opts.Check(token)
	}
	got, want := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(h.opts.Token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// cookieValue is what the cookie holds for token: not the token itself.
func cookieValue(token string) string {
	sum := sha256.Sum256([]byte("zot inspect cookie\x00" + token))
	return hex.EncodeToString(sum[:])
}

// sameOrigin refuses a request a page of another origin made.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}

// authorized says whether r carries the token: a bearer header, or the
// cookie.
func (h *handler) authorized(r *http.Request) bool {
	if h.opts.Trust != nil && h.opts.Trust(r) {
		return true
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return h.valid(strings.TrimPrefix(a, "Bearer "))
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false
	}
	if h.opts.Check != nil || h.opts.Token == "" {
		return false // a listener's tokens are checked as bearer tokens only
	}
	want := cookieValue(h.opts.Token)
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(want)) == 1
}

func (h *handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			http.Error(w, "refused: a request from another origin", http.StatusForbidden)
			return
		}
		if !h.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zot inspect"`)
			http.Error(w, "authentication required: open the page with ?token=, or paste the token", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}

// setCookie gives the browser the cookie of token.
func (h *handler) setCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookieValue(token), Path: Prefix,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// page serves the page; ?token= becomes the cookie and leaves the URL.
func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		if !h.valid(tok) {
			// Back to the page, which says so, without the token.
			w.Header().Set("Location", Prefix+"#invalid-token")
			w.WriteHeader(http.StatusSeeOther)
			return
		}
		if h.opts.Check == nil {
			h.setCookie(w, r, tok)
		}
		q := r.URL.Query()
		q.Del("token")
		target := Prefix
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	data, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(data)
}

// login takes a pasted token (form field or JSON {"token":…}).
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "refused: a request from another origin", http.StatusForbidden)
		return
	}
	var tok string
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			Token string `json:"token"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body)
		tok = body.Token
	} else {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		tok = r.PostFormValue("token")
	}
	tok = strings.TrimSpace(tok)
	if !h.valid(tok) || h.opts.Check != nil {
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	h.setCookie(w, r, tok)
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "refused: a request from another origin", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// snapshot answers everything kept (?session= for one session's),
// redacted.
func (h *handler) snapshot(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	_, one := q["session"]
	snap := h.opts.Tap.Snapshot(q.Get("session"), !one)
	for i, rec := range snap.Records { // the snapshot's own slice
		snap.Records[i] = tap.RedactRecord(rec)
	}
	writeJSON(w, snap)
}

// export answers a session's records (?session=, or every session's),
// redacted, as a file to save.
func (h *handler) export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	session, one := q["session"]
	id := ""
	if one {
		id = session[0]
	}
	name := "zot-inspect-all.json"
	if one {
		name = "zot-inspect-" + safeName(id) + ".json"
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	writeJSON(w, h.opts.Tap.Export(id, !one))
}

func safeName(s string) string {
	if s == "" {
		return "no-session"
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// live streams the records as they are added, redacted, as server-sent events:
// "record" events, and "lost" when the page fell behind and should take
// a new snapshot.
func (h *handler) live(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	sub := h.opts.Tap.Subscribe(4096)
	defer sub.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ": zot inspect\nretry: 1000\n\n")
	fl.Flush()
	beat := time.NewTicker(h.opts.Heartbeat)
	defer beat.Stop()
	var buf []byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.opts.Done:
			return
		case <-beat.C:
			if _, err := io.WriteString(w, ": beat\n\n"); err != nil {
				return
			}
			fl.Flush()
		case rec := <-sub.C():
			buf = buf[:0]
			buf = appendEvent(buf, rec)
			// Take what else waits, so a burst goes out in one write.
		more:
			for range 256 {
				select {
				case rec := <-sub.C():
					buf = appendEvent(buf, rec)
				default:
					break more
				}
			}
			if n := sub.Lost(); n > 0 {
				buf = fmt.Appendf(buf, "event: lost\ndata: %d\n\n", n)
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// appendEvent appends r, redacted, as a "record" event.
func appendEvent(buf []byte, r *tap.Record) []byte {
	data, err := json.Marshal(tap.RedactRecord(r))
	if err != nil {
		return buf
	}
	buf = append(buf, "event: record\ndata: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

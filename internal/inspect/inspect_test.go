package inspect

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/tap"
)

func serve(t *testing.T, opts Options, method, target string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	if opts.Tap == nil {
		opts.Tap = tap.New(tap.Options{})
	}
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	Handler(opts).ServeHTTP(w, req)
	return w.Result()
}

// Who the handler serves: the token as a bearer, the cookie it gave; not
// another origin, another site, a forged cookie, or anyone when it has
// neither a token nor a listener that vouches.
func TestAuthentication(t *testing.T) {
	opts := Options{Token: "secret-token"}
	if r := serve(t, opts, "POST", "/inspect/login", map[string]string{"Content-Type": "application/json"}, `{"token":"secret-token"}`); r.StatusCode != http.StatusNoContent {
		t.Fatalf("login: %d", r.StatusCode)
	} else {
		c := r.Cookies()
		if len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Value == "secret-token" {
			t.Fatalf("cookie %+v", c)
		}
		if r := serve(t, opts, "GET", "/inspect/api/snapshot", map[string]string{"Cookie": c[0].Name + "=" + c[0].Value}, ""); r.StatusCode != 200 {
			t.Errorf("with the cookie: %d", r.StatusCode)
		}
	}
	cases := []struct {
		name string
		opts Options
		hdr  map[string]string
		want int
	}{
		{"bearer", opts, map[string]string{"Authorization": "Bearer secret-token"}, 200},
		{"wrong bearer", opts, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"nothing", opts, nil, 401},
		{"forged cookie", opts, map[string]string{"Cookie": cookieName + "=" + cookieValue("")}, 401},
		{"another origin", opts, map[string]string{"Authorization": "Bearer secret-token", "Origin": "http://evil.example"}, 403},
		{"another site", opts, map[string]string{"Authorization": "Bearer secret-token", "Sec-Fetch-Site": "cross-site"}, 403},
		{"own origin", opts, map[string]string{"Authorization": "Bearer secret-token", "Origin": "http://example.com", "Sec-Fetch-Site": "same-origin"}, 200},
		{"no token at all", Options{}, map[string]string{"Authorization": "Bearer ", "Cookie": cookieName + "=" + cookieValue("")}, 401},
		{"a listener vouches", Options{Trust: func(*http.Request) bool { return true }}, nil, 200},
	}
	for _, c := range cases {
		if r := serve(t, c.opts, "GET", "/inspect/api/snapshot", c.hdr, ""); r.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, r.StatusCode, c.want)
		}
	}
	// The page's shell and assets need no token; they hold no traffic.
	for _, p := range []string{"/inspect", "/inspect/assets/app.js", "/inspect/assets/app.css"} {
		r := serve(t, opts, "GET", p, nil, "")
		if r.StatusCode != 200 || r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, CSP %q", p, r.StatusCode, r.Header.Get("Content-Security-Policy"))
		}
	}
	if r := serve(t, opts, "GET", "/inspect/assets/../inspect.go", nil, ""); r.StatusCode == 200 {
		t.Error("served a file that is not an asset")
	}
}

// The live stream sends each record as it is added, and says when the
// reader lost some.
func TestLiveStream(t *testing.T) {
	tp := tap.New(tap.Options{})
	done := make(chan struct{})
	srv := httptest.NewServer(Handler(Options{Tap: tp, Token: "t", Done: done, Heartbeat: time.Hour}))
	defer srv.Close()
	defer close(done)
	req, _ := http.NewRequest("GET", srv.URL+"/inspect/api/live", nil)
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf) // the opening comment: subscribed
	if !strings.Contains(string(buf[:n]), "zot inspect") {
		t.Fatalf("opening %q", buf[:n])
	}
	c := tp.Conn(tap.DoorACP, "memory", "x")
	c.Frame(true, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"s"},"_meta":{"apiKey":"`+liveKey+`","note":"Authorization: Bearer `+liveBearer+`"}}`))
	var got strings.Builder
	for !strings.Contains(got.String(), "\n\n") {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	if !strings.HasPrefix(got.String(), "event: record\ndata: {") || !strings.Contains(got.String(), `"method":"session/cancel"`) {
		t.Fatalf("live: %q", got.String())
	}
	if strings.Contains(got.String(), liveKey) || strings.Contains(got.String(), liveBearer) || !strings.Contains(got.String(), tap.Redacted) {
		t.Errorf("the live stream shows a secret: %q", got.String())
	}
}

// Secrets of the frames the redaction tests send.
const (
	liveKey    = "sk-ant-api03-live0123456789abcdef"
	liveBearer = "eyJhbGciOiJIUzI1NiJ9.live.sig"
)

// The snapshot the page loads shows no API key, bearer token or
// Authorization header, and keeps the rest of the frame; the tap still
// holds the frame as it crossed.
func TestSnapshotRedacted(t *testing.T) {
	tp := tap.New(tap.Options{})
	c := tp.RPC("stdio", "x", func() string { return "s" })
	c.Frame(true, time.Now(), []byte(`{"type":"prompt","id":"1","message":"export ANTHROPIC_API_KEY=`+liveKey+`"}`))
	c.Frame(false, time.Now(), []byte(`{"headers":[{"name":"Authorization","value":"Bearer `+liveBearer+`"}],"x-api-key":"k-123456"}`))
	r := serve(t, Options{Tap: tp, Token: "t"}, "GET", "/inspect/api/snapshot", map[string]string{"Authorization": "Bearer t"}, "")
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		t.Fatalf("snapshot: %d %s", r.StatusCode, body)
	}
	for _, s := range []string{liveKey, liveBearer, "k-123456"} {
		if strings.Contains(string(body), s) {
			t.Errorf("the snapshot shows %q:\n%s", s, body)
		}
	}
	for _, keep := range []string{`"type":"prompt"`, "ANTHROPIC_API_KEY=" + tap.Redacted, `"name":"Authorization"`} {
		if !strings.Contains(string(body), keep) {
			t.Errorf("the snapshot lost %q:\n%s", keep, body)
		}
	}
	if !strings.Contains(string(tp.Snapshot("s", false).Records[0].Frame), liveKey) {
		t.Error("the tap's own records were redacted in place")
	}
}

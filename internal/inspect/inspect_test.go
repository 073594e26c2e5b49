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
	c.Frame(true, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"s"}}`))
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
}

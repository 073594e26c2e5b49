package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// modelsEndpoints is a loopback stand-in for the three kinds of models
// endpoint, each answering in its vendor's shape: Anthropic's GET
// /v1/models (ModelInfo of @anthropic-ai/sdk 1.14.0, resources/models.d.ts:
// id, max_input_tokens, max_tokens; has_more, last_id), OpenAI's GET
// /v1/models (Model of openai 7.57.0, resources/models.d.ts: id, object,
// created, owned_by) and Gemini's GET /v1beta/models (Model of
// @google/genai 3.3.0: name, inputTokenLimit, outputTokenLimit, and the
// REST supportedGenerationMethods). The Anthropic list comes in two pages.
func modelsEndpoints(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		switch {
		case r.URL.Path == "/v1/models" && r.Header.Get("x-api-key") == "test-key" && r.URL.Query().Get("after_id") == "":
			w.Write([]byte(`{"data":[{"type":"model","id":"claude-sonnet-5-5","display_name":"Claude Sonnet 5.5","created_at":"2026-09-01T00:00:00Z","max_input_tokens":1000000,"max_tokens":128000}],"has_more":true,"first_id":"claude-sonnet-5-5","last_id":"claude-sonnet-5-5"}`))
		case r.URL.Path == "/v1/models" && r.Header.Get("x-api-key") == "test-key":
			w.Write([]byte(`{"data":[{"type":"model","id":"claude-opus-5-7","display_name":"Claude Opus 5.7","created_at":"2026-11-25T00:00:00Z","max_input_tokens":2000000,"max_tokens":256000}],"has_more":false,"first_id":"claude-opus-5-7","last_id":"claude-opus-5-7"}`))
		case r.URL.Path == "/v1/models" && r.Header.Get("Authorization") == "":
			w.Write([]byte(`{"object":"list","data":[{"id":"qwen3-coder:30b","object":"model","created":1760000000,"owned_by":"library"}]}`))
		case r.URL.Path == "/v1beta/models" && r.Header.Get("x-goog-api-key") == "test-key":
			w.Write([]byte(`{"models":[{"name":"models/gemini-4-xenon","inputTokenLimit":2097152,"outputTokenLimit":131072,"supportedGenerationMethods":["generateContent","countTokens"]},{"name":"models/text-embedding-9","inputTokenLimit":8192,"outputTokenLimit":1,"supportedGenerationMethods":["embedContent"]}]}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestModelsRefresh: zot models --refresh asks a provider's models
// endpoint, caches the ids and limits in the zot home, and the catalog
// (zot models, and sessions) knows them from then on: new ids with the
// limits the endpoint gave, still unpriced; a built-in model keeps its own
// facts. A failing endpoint is reported on one line, and with no key at
// all nothing is asked.
func TestModelsRefresh(t *testing.T) {
	srv := modelsEndpoints(t)
	zhome := t.TempDir()
	env := []string{"ZOT_HOME=" + zhome}
	for _, args := range [][]string{
		{"models", "--refresh", "--provider", "anthropic", "--api-key", "test-key", "--base-url", srv.URL},
		{"models", "--refresh", "--provider", "ollama", "--base-url", srv.URL + "/v1"},
		{"models", "--refresh", "--provider", "gemini", "--api-key", "test-key", "--base-url", srv.URL + "/v1beta"},
	} {
		_, stderr, code := runZot(t, "", env, args...)
		if code != 0 || !regexp.MustCompile(`^(anthropic: 2|ollama: 1|gemini: 1) models\n$`).MatchString(stderr) {
			t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	cache, err := os.ReadFile(filepath.Join(zhome, "models-cache.json"))
	if err != nil || !strings.Contains(string(cache), `"claude-opus-5-7"`) || !strings.Contains(string(cache), `"qwen3-coder:30b"`) {
		t.Fatalf("cache %s (%v)", cache, err)
	}
	// Without --refresh, from the cache: no server needed.
	srv.Close()
	stdout, stderr, code := runZot(t, "", env, "models")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, row := range []string{
		`anthropic +claude-opus-5-7 +2000000 +256000 +yes +unknown`,
		`anthropic +claude-sonnet-5-5 \* +1000000 +128000 +yes +2 / 10`, // the built-in facts
		`ollama +qwen3-coder:30b +128000 +unknown +no +unknown`,
		`gemini +gemini-4-xenon +2097152 +131072 +yes +unknown`,
	} {
		if !regexp.MustCompile(`(?m)^` + row + `$`).MatchString(stdout) {
			t.Errorf("no row %q in\n%s", row, stdout)
		}
	}
	if strings.Contains(stdout, "text-embedding-9") {
		t.Error("a model that does not generate content was listed")
	}
	// A failing endpoint, and no key at all.
	_, stderr, code = runZot(t, "", env, "models", "--refresh", "--provider", "anthropic", "--api-key", "wrong", "--base-url", srv.URL)
	if code != 1 || !strings.HasPrefix(stderr, "anthropic: ") || strings.HasPrefix(stderr, "anthropic: anthropic: ") {
		t.Errorf("failing endpoint: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runZot(t, "", env, "models", "--refresh")
	if code != 1 || !strings.Contains(stderr, "no provider has a key") {
		t.Errorf("no keys: exit %d, stderr %q", code, stderr)
	}
}

// TestModelsCacheCorruptIsLeftOut: a models cache that cannot be read (cut
// short by a full disk, edited by hand) only adds to what zot knows, so
// zot -p, zot rpc and zot models still work: each says on stderr that the
// cache is left out and how to write it again, and serves the built-in
// catalog.
func TestModelsCacheCorruptIsLeftOut(t *testing.T) {
	zhome := t.TempDir()
	if err := os.WriteFile(filepath.Join(zhome, "models-cache.json"), []byte(`{"providers":{"openai":{"fetched":"2026-11-26T10:00:00Z","models":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"ZOT_HOME=" + zhome}
	const warning = "models-cache.json: unexpected end of JSON input (zot models --refresh writes it again)"
	stdout, stderr, code := runZot(t, "", env, "-p", "hi", "--provider", "scripted", "--cwd", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "round trip") || !strings.Contains(stderr, warning) {
		t.Errorf("zot -p: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = runZot(t, `{"type":"get_state","id":"1"}`+"\n", env, "rpc", "--provider", "scripted", "--cwd", t.TempDir())
	if code != 0 || !strings.Contains(stdout, `"success":true`) || !strings.Contains(stderr, warning) {
		t.Errorf("zot rpc: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = runZot(t, "", env, "models")
	if code != 0 || !regexp.MustCompile(`(?m)^anthropic +claude-sonnet-5-5 \*`).MatchString(stdout) || !strings.Contains(stderr, warning) {
		t.Errorf("zot models: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestModelsRefreshHostileList: a models endpoint that answers with ids no
// model has (terminal escape sequences, spaces) and with more models than
// any real list leaves out those ids and keeps the first 5,000, says so on
// its line, and zot models prints nothing of what was left out. The list
// is in the shape of OpenAI's GET /v1/models (Model of openai 7.57.0).
func TestModelsRefreshHostileList(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[{"id":"\u001b]0;owned\u0007\u001b[31mred","object":"model"},{"id":"two words","object":"model"}`)
	for i := range 6000 {
		fmt.Fprintf(&b, `,{"id":"m-%05d","object":"model"}`, i)
	}
	b.WriteString(`]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, b.String())
	}))
	defer srv.Close()
	env := []string{"ZOT_HOME=" + t.TempDir()}
	_, stderr, code := runZot(t, "", env, "models", "--refresh", "--provider", "ollama", "--base-url", srv.URL+"/v1")
	if want := "ollama: 5000 models (1002 more left out: repeated, not a model id, or past the first 5000)\n"; code != 0 || stderr != want {
		t.Fatalf("exit %d, stderr %q, want %q", code, stderr, want)
	}
	stdout, stderr, code := runZot(t, "", env, "models", "--provider", "ollama")
	if code != 0 || strings.ContainsAny(stdout, "\x1b\x07") || strings.Contains(stdout, "two words") ||
		!strings.Contains(stdout, "m-04999") || strings.Contains(stdout, "m-05000") {
		t.Fatalf("exit %d, stderr %q, stdout (%d bytes) %q…", code, stderr, len(stdout), stdout[:min(len(stdout), 400)])
	}
}

// TestModelsRefreshOversizedAnswer: a models endpoint that answers more
// than any models list (16 MiB) is reported as such, on one line without
// the provider named twice, and the cache is not written.
func TestModelsRefreshOversizedAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, `"}]}`)
	}))
	defer srv.Close()
	zhome := t.TempDir()
	_, stderr, code := runZot(t, "", []string{"ZOT_HOME=" + zhome}, "models", "--refresh", "--provider", "ollama", "--base-url", srv.URL+"/v1")
	if want := "ollama: " + srv.URL + "/v1/models answered more than 16 MiB, more than any models list\n"; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Fatalf("exit %d, stderr %q, want %q first", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(zhome, "models-cache.json")); err == nil {
		t.Error("a cache was written")
	}
}

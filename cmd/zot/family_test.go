package main

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestGeminiProFamilyRefusesNone: a Gemini 2.x Pro id the catalog does not
// hold cannot turn its thinking off (Gemini answers a thinkingBudget of 0
// with "Budget 0 is invalid. This model only works in thinking mode."), so
// --reasoning none is refused before anything is sent, naming the levels
// the model takes.
func TestGeminiProFamilyRefusesNone(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	_, stderr, code := runZot(t, "", []string{"ZOT_HOME=" + t.TempDir()}, "-p", "hi", "--provider", "gemini", "--model", "gemini-2.5-pro-preview-06-05",
		"--reasoning", "none", "--api-key", "test-key", "--base-url", srv.URL, "--cwd", t.TempDir())
	want := "zot: model gemini-2.5-pro-preview-06-05 does not take reasoning level \"none\" (it takes low, medium, high)\n"
	if code != 1 || stderr != want || asked.Load() != 0 {
		t.Fatalf("exit %d, stderr %q, %d requests; want exit 1, %q and none sent", code, stderr, asked.Load(), want)
	}
}

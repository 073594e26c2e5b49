package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestResumedSessionWithBoundThinkingRecovers: a session file written
// before zot recorded what a thinking block is bound to, resumed against a
// model that binds thinking to the conversation, is not locked by the
// vendor's 400 ("Invalid `signature` in `thinking` block. The block is
// bound to a different conversation."): zot drops the thinking and sends
// once more, the prompt is answered, and the session file no longer holds
// the refused blocks. The loopback server answers in the stream format of
// @anthropic-ai/sdk 1.14.0 (RawMessageStreamEvent) and refuses any request
// that sends the old signature back, as Anthropic's prefix check does for
// a block whose system prompt changed.
func TestResumedSessionWithBoundThinkingRecovers(t *testing.T) {
	var (
		mu       sync.Mutex
		requests []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, string(body))
		mu.Unlock()
		if strings.Contains(string(body), `"signature":"sig-yesterday"`) {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `+"`signature`"+` in `+"`thinking`"+` block. The block is bound to a different conversation."}}`)
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		for _, e := range []string{
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5-5","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Still here."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
			`{"type":"message_stop"}`,
		} {
			var typ struct{ Type string }
			json.Unmarshal([]byte(e), &typ)
			io.WriteString(w, "event: "+typ.Type+"\ndata: "+e+"\n\n")
		}
	}))
	defer srv.Close()

	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"session":{"version":1,"cwd":"` + dir + `","created":"2026-11-26T10:00:00Z"}}`,
		`{"role":"user","time":"2026-11-26T10:00:00Z","content":[{"type":"text","text":"hello"}]}`,
		`{"role":"assistant","time":"2026-11-26T10:00:01Z","content":[{"type":"thinking","text":"A greeting.","provider":"anthropic","signature":"sig-yesterday"},{"type":"text","text":"Hello."}]}`,
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runZot(t, "", nil, "-p", "are you there?", "--provider", "anthropic", "--model", "claude-sonnet-5-5",
		"--api-key", "test-key", "--base-url", srv.URL, "--cwd", dir, "--session", file)
	if code != 0 || strings.TrimSpace(stdout) != "Still here." {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 2 || !strings.Contains(requests[0], "sig-yesterday") || strings.Contains(requests[1], "sig-yesterday") {
		t.Fatalf("%d requests, want the refused one and one without the old thinking:\n%s", len(requests), strings.Join(requests, "\n"))
	}
	saved, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(saved), "sig-yesterday") || !strings.Contains(string(saved), "Still here.") {
		t.Errorf("session file after the recovery:\n%s", saved)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/sdk/wire"
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
	var stream strings.Builder
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
		stream.WriteString("event: " + typ.Type + "\ndata: " + e + "\n\n")
	}
	refusedOnce{
		provider: "anthropic", model: "claude-sonnet-5-5",
		lines: []string{
			`{"role":"user","time":"2026-11-26T10:00:00Z","content":[{"type":"text","text":"hello"}]}`,
			`{"role":"assistant","time":"2026-11-26T10:00:01Z","content":[{"type":"thinking","text":"A greeting.","provider":"anthropic","signature":"sig-yesterday"},{"type":"text","text":"Hello."}]}`,
		},
		refused: `"signature":"sig-yesterday"`,
		stored:  `"signature":"sig-yesterday"`,
		status:  http.StatusBadRequest,
		errBody: `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid ` + "`signature`" + ` in ` + "`thinking`" + ` block. The block is bound to a different conversation."}}`,
		stream:  stream.String(),
	}.run(t)
}

// TestLateMCPServerWithBoundThinking: in zot rpc on a model that binds its
// thinking to the conversation, an MCP server added after the first
// prompt reaches the model with the next prompt (its tools offered, a note
// saying so) without a request failing the vendor's prefix check: the
// thinking the new tool list invalidates is left out, and the thinking of
// an unchanged prefix is sent back.
func TestLateMCPServerWithBoundThinking(t *testing.T) {
	srv := providertest.NewBoundServer(t, "")
	bin := goServer(t)
	p := start(t, nil, "rpc", "--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key",
		"--base-url", srv.URL, "--cwd", t.TempDir(), "--tools", "ls", "--strict-mcp-config")
	prompt := func(id, text string) {
		t.Helper()
		p.send(`{"id":"` + id + `","type":"prompt","message":"` + text + `"}`)
		r, _ := p.response()
		wantResponse(t, r, "prompt", true, "")
		evs := p.untilDone()
		for _, ev := range evs {
			if e, ok := ev.(*wire.ErrorEvent); ok {
				t.Fatalf("prompt %q: %s", text, e.Message)
			}
		}
	}
	prompt("1", "first")
	prompt("2", "second") // the first answer's thinking goes back
	p.send(fmt.Sprintf(`{"id":"3","type":"mcp_add","servers":[{"name":"late","command":%q}]}`, bin))
	r, _ := p.response()
	wantResponse(t, r, "mcp_add", true, "")
	deadline := time.Now().Add(hangGuard)
	for {
		p.send(`{"id":"l","type":"mcp_list"}`)
		r, _ := p.response()
		if s := mcpServersResult(t, r); len(s) == 1 && s[0].Status == "ready" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the MCP server never became ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	prompt("4", "third")
	prompt("5", "fourth")
	rejected, foreign, sent, bodies := srv.Stats()
	if rejected != 0 || len(bodies) != 4 {
		t.Fatalf("%d of %d requests failed the prefix check", rejected, len(bodies))
	}
	if foreign != 0 {
		t.Fatalf("%d thinking blocks of another model were sent", foreign)
	}
	third, _ := json.Marshal(bodies[2])
	if !strings.Contains(string(third), "mcp__late__echo") || !strings.Contains(string(third), "Note from zot") {
		t.Errorf("the third request lacks the late tools or the note: %s", third)
	}
	if sent == 0 {
		t.Error("no thinking was ever sent back")
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// refusedOnce is a resumed session whose file holds something a vendor
// refuses back on every request, and what the test sends and expects.
type refusedOnce struct {
	provider, model string
	lines           []string // the session file after its header line
	refused         string   // the text of the refused item in a request
	stored          string   // its text in the session file
	status          int      // the refusal's status
	errBody         string   // the refusal's body
	stream          string   // the answer to a request without refused
	wantRetry       string   // what the retried request holds, "" for nothing
}

// run resumes the session with zot -p against a loopback vendor that
// refuses any request holding c.refused: zot drops it and sends once
// more, the prompt is answered, and the session file no longer holds it.
func (c refusedOnce) run(t *testing.T) {
	t.Helper()
	var (
		mu       sync.Mutex
		requests []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, string(body))
		mu.Unlock()
		if strings.Contains(string(body), c.refused) {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(c.status)
			io.WriteString(w, c.errBody)
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, c.stream)
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	lines := append([]string{`{"session":{"version":1,"cwd":"` + dir + `","created":"2026-11-26T10:00:00Z"}}`}, c.lines...)
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runZot(t, "", []string{"ZOT_HOME=" + t.TempDir()}, "-p", "are you there?", "--provider", c.provider, "--model", c.model,
		"--api-key", "test-key", "--base-url", srv.URL, "--cwd", dir, "--session", file)
	if code != 0 || strings.TrimSpace(stdout) != "Still here." {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 2 || !strings.Contains(requests[0], c.refused) || strings.Contains(requests[1], c.refused) ||
		!strings.Contains(requests[1], c.wantRetry) {
		t.Fatalf("%d requests, want the refused one and one without what was refused (and with %q):\n%s", len(requests), c.wantRetry, strings.Join(requests, "\n"))
	}
	saved, err := os.ReadFile(file)
	if err != nil || !strings.Contains(strings.Join(c.lines, "\n"), c.stored) || strings.Contains(string(saved), c.stored) || !strings.Contains(string(saved), "Still here.") {
		t.Fatalf("session file (%v):\n%s", err, saved)
	}
}

// TestResumedSessionWithUnverifiableReasoningRecovers: OpenAI's Responses
// API refuses encrypted reasoning it cannot verify (one produced under
// another key or organization, or refused for reasons of its own) with a
// 400 of code invalid_encrypted_content, on every request that sends it
// back: zot drops the reasoning and sends once more. The error body and
// stream are in the shapes of openai 7.57.0 (APIError's error object;
// ResponseStreamEvent), the message as the API words it.
func TestResumedSessionWithUnverifiableReasoningRecovers(t *testing.T) {
	refusedOnce{
		provider: "openai", model: "gpt-6.1-sol",
		lines: []string{
			`{"role":"user","time":"2026-11-26T10:00:00Z","content":[{"type":"text","text":"hello"}]}`,
			`{"role":"assistant","time":"2026-11-26T10:00:01Z","content":[{"type":"thinking","text":"A greeting.","provider":"openai","id":"rs_1","data":"gAAA-other-org"},{"type":"text","text":"Hello."}]}`,
		},
		refused: `"encrypted_content":"gAAA-other-org"`,
		stored:  `"data":"gAAA-other-org"`,
		status:  http.StatusBadRequest,
		errBody: `{"error":{"message":"The encrypted content gAAA...-org could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}`,
		stream: "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"status\":\"in_progress\",\"content\":[]}}\n\n" +
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Still here.\",\"logprobs\":[]}\n\n" +
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":3,\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":3}}}\n\n",
	}.run(t)
}

// TestResumedSessionWithRefusedThoughtSignatureRecovers: Gemini refuses a
// thought signature it cannot take back (one from another model, say)
// with a 400 ("Corrupted thought signature.") on every request that sends
// it: zot drops the signatures and thinking and sends once more, the call
// without a signature then carrying the value Gemini documents for calls
// it did not sign. Error body and stream in the shapes of @google/genai
// 3.3.0 (the API's error object; GenerateContentResponse).
func TestResumedSessionWithRefusedThoughtSignatureRecovers(t *testing.T) {
	refusedOnce{
		provider: "gemini", model: "gemini-3-pro",
		lines: []string{
			`{"role":"user","time":"2026-11-26T10:00:00Z","content":[{"type":"text","text":"list files"}]}`,
			`{"role":"assistant","time":"2026-11-26T10:00:01Z","content":[{"type":"thinking","text":"Listing.","provider":"gemini","signature":"sig-other-model"},{"type":"tool_call","id":"c1","name":"ls","args":{},"signature":"sig-other-model"}]}`,
			`{"role":"tool","time":"2026-11-26T10:00:02Z","content":[{"type":"tool_result","call_id":"c1","name":"ls","content":[{"type":"text","text":"a.txt"}]}]}`,
			`{"role":"assistant","time":"2026-11-26T10:00:03Z","content":[{"type":"text","text":"One file."}]}`,
		},
		refused:   `"thoughtSignature":"sig-other-model"`,
		stored:    `"signature":"sig-other-model"`,
		status:    http.StatusBadRequest,
		errBody:   `{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}`,
		stream:    `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Still here."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3}}` + "\n\n",
		wantRetry: `"thoughtSignature":"skip_thought_signature_validator"`,
	}.run(t)
}

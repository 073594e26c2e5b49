package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEmptyAnswerIsAnError: an answer that ends with neither text nor a
// tool call, whatever the vendor's finish reason, makes zot -p fail with
// a message naming that reason, never exit 0 having printed nothing. The
// loopback servers answer in each vendor's stream format: Anthropic's
// RawMessageStreamEvent of @anthropic-ai/sdk 1.14.0 (an empty end_turn,
// which the vendor documents after tool results, a thinking block alone,
// pause_turn, model_context_window_exceeded), Gemini's
// GenerateContentResponse of @google/genai 3.3.0 (STOP without parts),
// OpenAI's ChatCompletionChunk of openai 7.57.0 (stop with empty content)
// and DeepSeek's insufficient_system_resource finish reason (DeepSeek API
// docs, "Create Chat Completion": finish_reason).
func TestEmptyAnswerIsAnError(t *testing.T) {
	anthropic := func(blocks, stop string) string {
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-5-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
			blocks +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + stop + "\"},\"usage\":{\"output_tokens\":3}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	}
	thinking := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Nothing to say.\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	chat := func(finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n" +
			`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + finish + `"}]}` + "\n\n" +
			"data: [DONE]\n\n"
	}
	for _, c := range []struct {
		name, provider, model, stream, finish string
	}{
		{"anthropic end_turn", "anthropic", "claude-sonnet-5-5", anthropic("", "end_turn"), "end_turn"},
		{"anthropic thinking alone", "anthropic", "claude-sonnet-5-5", anthropic(thinking, "end_turn"), "end_turn"},
		{"anthropic pause_turn", "anthropic", "claude-sonnet-5-5", anthropic("", "pause_turn"), "pause_turn"},
		{"anthropic context window", "anthropic", "claude-sonnet-5-5", anthropic("", "model_context_window_exceeded"), "model_context_window_exceeded"},
		{"gemini STOP", "gemini", "gemini-3-pro", `data: {"candidates":[{"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":0}}` + "\n\n", "STOP"},
		{"openai stop", "openai", "gpt-4.1", chat("stop"), "stop"},
		{"deepseek insufficient_system_resource", "deepseek", "deepseek-chat", chat("insufficient_system_resource"), "insufficient_system_resource"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("content-type", "text/event-stream")
				io.WriteString(w, c.stream)
			}))
			defer srv.Close()
			stdout, stderr, code := runZot(t, "", []string{"ZOT_HOME=" + t.TempDir()}, "-p", "hi", "--provider", c.provider, "--model", c.model,
				"--api-key", "test-key", "--base-url", srv.URL, "--cwd", t.TempDir())
			want := "the model ended its answer without any text or tool call (finish reason: " + c.finish + ")"
			if code != 1 || stdout != "" || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
			}
		})
	}
}

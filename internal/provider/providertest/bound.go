package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// BoundError is Anthropic's answer to a thinking block that fails the
// prefix check.
const BoundError = `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid ` + "`signature`" + ` in ` + "`thinking`" + ` block. The block is bound to a different conversation."}}`

// BoundServer is a loopback Anthropic Messages endpoint that checks the
// thinking blocks sent back as the vendor's preserved thinking does
// (platform.claude.com/docs/en/build-with-claude/preserved-thinking/
// prefix-checks): each block it signed is bound to the model and to the
// top-level system, tools and earlier messages of the request that
// produced it (cache_control left out of the comparison); a block it did
// not sign, or whose prefix changed, fails the request with [BoundError]
// (a 400). A block of another model is dropped without an error, which
// the server counts, so that a test can see zot never sends one. Its
// answers follow the stream events of @anthropic-ai/sdk 1.14.0
// (RawMessageStreamEvent): a request without tools (a compaction's
// summary) gets text; any other gets a signed thinking block, then a call
// of the server's tool when there is one and the request does not end in
// a tool result, else a text answer.
type BoundServer struct {
	// URL is the server's base URL.
	URL string

	t    *testing.T
	tool string

	mu       sync.Mutex
	issued   map[string]boundTo // signature → what it is bound to
	requests []map[string]any
	rejected int // 400s for a failed prefix check
	foreign  int // blocks of another model that were sent
	sent     int // thinking blocks sent back and accepted
	reject   bool
}

type boundTo struct{ model, prefix string }

// NewBoundServer starts a BoundServer, closed when the test ends. tool,
// when not empty, is the tool its answer to a prompt calls.
func NewBoundServer(t *testing.T, tool string) *BoundServer {
	s := &BoundServer{t: t, tool: tool, issued: map[string]boundTo{}}
	srv := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// RejectAll makes the server answer every request with the prefix-check
// 400 (on), or check blocks again (off).
func (s *BoundServer) RejectAll(on bool) {
	s.mu.Lock()
	s.reject = on
	s.mu.Unlock()
}

// Stats returns the server's counters (requests refused by the prefix
// check, blocks of another model sent, thinking blocks sent back and
// accepted) and a copy of the requests it got so far.
func (s *BoundServer) Stats() (rejected, foreign, sent int, reqs []map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected, s.foreign, s.sent, append([]map[string]any(nil), s.requests...)
}

// Canonical is the JSON of v without cache_control members.
func Canonical(v any) string {
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if k != "cache_control" {
					out[k] = strip(e)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return string(b)
}

func (s *BoundServer) handle(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		s.t.Errorf("request is not JSON: %s", data)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, body)
	model, _ := body["model"].(string)
	msgs, _ := body["messages"].([]any)
	reject := s.reject
	for k, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, b := range content {
			block := b.(map[string]any)
			if block["type"] != "thinking" && block["type"] != "redacted_thinking" {
				continue
			}
			sig, _ := block["signature"].(string)
			rec, ok := s.issued[sig]
			switch {
			case !ok:
				reject = true
			case rec.model != model:
				s.foreign++
			case rec.prefix != Canonical([]any{body["system"], body["tools"], msgs[:k]}):
				reject = true
			default:
				s.sent++
			}
		}
	}
	if reject {
		s.rejected++
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, BoundError)
		return
	}
	sig := fmt.Sprintf("sig-%d", len(s.issued)+1)
	s.issued[sig] = boundTo{model: model, prefix: Canonical([]any{body["system"], body["tools"], msgs})}
	last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	afterTool := last[len(last)-1].(map[string]any)["type"] == "tool_result"
	w.Header().Set("content-type", "text/event-stream")
	var ev []string
	add := func(v string) { ev = append(ev, v) }
	add(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"` + model + `","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	if body["tools"] == nil {
		add(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		add(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Summary of the conversation."}}`)
		add(`{"type":"content_block_stop","index":0}`)
		add(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`)
	} else {
		add(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		add(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Thinking it over."}}`)
		add(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + sig + `"}}`)
		add(`{"type":"content_block_stop","index":0}`)
		if s.tool == "" || afterTool {
			add(`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
			add(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done."}}`)
			add(`{"type":"content_block_stop","index":1}`)
			add(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`)
		} else {
			add(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_` + sig + `","name":"` + s.tool + `","input":{}}}`)
			add(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}`)
			add(`{"type":"content_block_stop","index":1}`)
			add(`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`)
		}
	}
	add(`{"type":"message_stop"}`)
	for _, e := range ev {
		var typ struct{ Type string }
		json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
}

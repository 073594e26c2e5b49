package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// doneMarker is the data of the last event of a complete stream.
const doneMarker = "[DONE]"

// chunk is one streamed chat.completion.chunk, or an error object.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			Refusal          *string `json:"refusal"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens     int `json:"cached_tokens"`
			CacheWriteTokens int `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
		// PromptCacheHitTokens is DeepSeek's spelling of cached tokens.
		PromptCacheHitTokens *int `json:"prompt_cache_hit_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// part is one block of the message being assembled.
type part struct {
	kind  string // "text", "thinking" or "tool"
	field string // the delta field a thinking part came in
	text  strings.Builder
	call  *toolCall
}

// toolCall is one tool call being assembled.
type toolCall struct {
	id, name string
	args     []byte
	ended    bool
}

// assembler turns one call's chunks into sink events and a Response.
type assembler struct {
	provider string
	sink     llm.Sink
	reported bool // an event beyond EventStart reached the sink
	parts    []*part
	calls    []*toolCall
	byIndex  map[int]*toolCall // the current call of each tool_calls index
	finish   string
	refusal  strings.Builder // the refusal message, from delta.refusal
	usage    llm.Usage
	done     bool
}

func newAssembler(provider string, sink llm.Sink) *assembler {
	return &assembler{provider: provider, sink: sink, byIndex: map[int]*toolCall{}}
}

// Reported says whether an event beyond EventStart reached the sink.
func (a *assembler) Reported() bool { return a.reported }

// emit reports an event to the sink.
func (a *assembler) emit(ev llm.Event) {
	a.reported = true
	a.sink(ev)
}

// Run reads s until [DONE] or an error. A body that ends without [DONE]
// after a finish_reason arrived is complete (some compatible servers never
// send [DONE]); one that ends before any finish_reason was cut.
func (a *assembler) Run(s *httpcall.Stream) error {
	for !a.done {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			if a.finish != "" {
				a.endCalls()
				return nil
			}
			return &llm.Error{Provider: a.provider, Kind: "stream_cut", Message: "stream ended before a finish_reason", Retryable: true}
		}
		if err != nil {
			return err
		}
		if err := a.handle(ev); err != nil {
			return err
		}
	}
	return nil
}

// handle applies one SSE event.
func (a *assembler) handle(ev httpcall.Event) error {
	if string(bytes.TrimSpace(ev.Data)) == doneMarker {
		a.endCalls()
		a.done = true
		return nil
	}
	var c chunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		if ev.Name == "error" {
			return &llm.Error{Provider: a.provider, Kind: "error", Message: string(ev.Data)}
		}
		return &llm.Error{Provider: a.provider, Kind: "invalid_event", Message: "decoding chunk: " + err.Error(), Err: err}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return a.chunkError(ev.Data)
	}
	if u := c.Usage; u != nil {
		cached, written := 0, 0
		if d := u.PromptTokensDetails; d != nil {
			cached, written = d.CachedTokens, d.CacheWriteTokens
		}
		if cached == 0 && u.PromptCacheHitTokens != nil {
			cached = *u.PromptCacheHitTokens
		}
		a.usage = llm.Usage{Input: max(u.PromptTokens-cached-written, 0), Output: u.CompletionTokens, CacheRead: cached, CacheWrite: written}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // zot asks for one choice
		}
		d := &ch.Delta
		switch {
		case d.ReasoningContent != nil && *d.ReasoningContent != "":
			a.thinking("reasoning_content", *d.ReasoningContent)
		case d.Reasoning != nil && *d.Reasoning != "":
			a.thinking("reasoning", *d.Reasoning)
		}
		if d.Content != nil && *d.Content != "" {
			a.text("text", llm.EventTextDelta, *d.Content)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			// The refusal message is shown like text, and it is the reason
			// the call stops for.
			a.refusal.WriteString(*d.Refusal)
			a.text("text", llm.EventTextDelta, *d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			a.toolFragment(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
			a.endCalls()
		}
	}
	return nil
}

// text appends s to the current part of kind, starting one if needed, and
// reports it.
func (a *assembler) text(kind string, ev llm.EventKind, s string) {
	n := len(a.parts)
	if n == 0 || a.parts[n-1].kind != kind {
		a.parts = append(a.parts, &part{kind: kind})
		n++
	}
	a.parts[n-1].text.WriteString(s)
	a.emit(llm.Event{Kind: ev, Text: s})
}

// thinking appends reasoning text that came in the delta field field.
func (a *assembler) thinking(field, s string) {
	a.text("thinking", llm.EventThinkingDelta, s)
	a.parts[len(a.parts)-1].field = field
}

// toolFragment applies one tool_calls entry. A fragment starts a new call
// when its index has none yet or when it carries a different id than the
// call open at that index (servers that reuse index 0 for every call). An
// entry without an index starts a new call when it carries an id or a name
// and otherwise continues the last call.
func (a *assembler) toolFragment(index *int, id, name, args string) {
	var c *toolCall
	key := len(a.calls)
	if index != nil {
		key = *index
		c = a.byIndex[key]
	} else if n := len(a.calls); n > 0 && id == "" && name == "" {
		key, c = -1, a.calls[n-1]
	}
	if c == nil || c.ended || (id != "" && c.id != "" && id != c.id) {
		if c != nil {
			a.endCall(c)
		}
		if id == "" {
			id = "call_" + strconv.Itoa(len(a.calls))
		}
		c = &toolCall{id: id, name: name}
		a.calls = append(a.calls, c)
		if key >= 0 {
			a.byIndex[key] = c
		}
		a.parts = append(a.parts, &part{kind: "tool", call: c})
		a.emit(llm.Event{Kind: llm.EventToolStart, ToolID: c.id, ToolName: c.name})
	} else if c.name == "" {
		c.name = name
	}
	if args != "" {
		c.args = append(c.args, args...)
		a.emit(llm.Event{Kind: llm.EventToolArgsDelta, Text: args, ToolID: c.id})
	}
}

// endCalls reports the end of every open tool call.
func (a *assembler) endCalls() {
	for _, c := range a.calls {
		a.endCall(c)
	}
}

func (a *assembler) endCall(c *toolCall) {
	if !c.ended {
		c.ended = true
		a.emit(llm.Event{Kind: llm.EventToolEnd, ToolID: c.id})
	}
}

// chunkError turns an error chunk into an *llm.Error.
func (a *assembler) chunkError(data []byte) error {
	le := &llm.Error{Provider: a.provider, Kind: "error", Message: "error chunk without details"}
	e, ok := parseError(data)
	if !ok {
		return le
	}
	if k := e.kind(); k != "" {
		le.Kind = k
	}
	if e.Message != "" {
		le.Message = e.Message
	}
	le.Retryable = retryableKind(le.Kind) || retryableCode(e.Code)
	return le
}

// retryableKind reports whether an error type names a transient failure.
func retryableKind(k string) bool {
	switch k {
	case "server_error", "rate_limit_exceeded", "rate_limit_error", "overloaded_error", "api_error", "timeout":
		return true
	}
	return false
}

// retryableCode reports whether a numeric error code is a transient HTTP
// status (OpenRouter reports mid-stream failures this way).
func retryableCode(code json.RawMessage) bool {
	var n int
	if json.Unmarshal(code, &n) != nil {
		return false
	}
	switch n {
	case 408, 429, 500, 502, 503, 504, 529:
		return true
	}
	return false
}

// Response assembles what has arrived. Tool calls that never ended are
// left out: their arguments are incomplete.
func (a *assembler) Response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	hasTools := false
	for _, p := range a.parts {
		switch p.kind {
		case "text":
			msg.Content = append(msg.Content, &llm.TextBlock{Text: p.text.String()})
		case "thinking":
			msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: a.provider, Text: p.text.String(), ID: p.field})
		case "tool":
			if !p.call.ended {
				continue
			}
			c := &llm.ToolCallBlock{ID: p.call.id, Name: p.call.name}
			c.Args, c.ArgsError = llm.ParseToolArgs(p.call.args)
			if c.ArgsError != "" && a.finish == "length" {
				c.MarkCut("max_completion_tokens")
			}
			msg.Content = append(msg.Content, c)
			hasTools = true
		}
	}
	resp := &llm.Response{Message: msg, Stop: stopReason(a.finish, hasTools), Usage: a.usage, Finish: a.finish}
	switch {
	case a.refusal.Len() > 0:
		resp.Stop, resp.Reason = llm.StopRefusal, a.refusal.String()
	case resp.Stop == llm.StopRefusal:
		resp.Reason = a.finish
	case resp.Stop == llm.StopLength && hasTools:
		resp.Reason = llm.CutReason
	}
	return resp
}

// stopReason maps finish_reason: content_filter is a refusal, length
// wins over tool calls (a call the limit cut never runs), and any other
// tool call means tool_use.
func stopReason(finish string, hasTools bool) llm.StopReason {
	switch finish {
	case "content_filter":
		return llm.StopRefusal
	case "length":
		return llm.StopLength
	}
	if hasTools {
		return llm.StopToolUse
	}
	switch finish {
	case "tool_calls", "function_call":
		return llm.StopToolUse
	}
	// stop and anything new.
	return llm.StopEndTurn
}

package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// maxBlocks bounds the content block index a stream may use, so that a
// corrupt index cannot make the assembler allocate without limit.
const maxBlocks = 4096

// streamEvent is any Messages API stream event; Type says which fields apply.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
		// StopDetails explains a refusal: RefusalStopDetails of
		// @anthropic-ai/sdk 1.12.0 (src/resources/messages/messages.ts).
		StopDetails *struct {
			Type        string `json:"type"`
			Category    string `json:"category"`
			Explanation string `json:"explanation"`
		} `json:"stop_details"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// wireUsage holds the token counts an event reports; absent counts are nil
// so that a later event only overrides what it carries.
type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// block is one content block being assembled.
type block struct {
	kind      string // the content_block type
	text      strings.Builder
	signature strings.Builder
	data      string
	id, name  string
	args      []byte
	input     json.RawMessage // the input of content_block_start
	stopped   bool
}

// assembler turns one call's stream events into sink events and a Response.
type assembler struct {
	sink     llm.Sink
	reported bool // an event beyond EventStart reached the sink
	blocks   []*block
	usage    llm.Usage
	stop     string
	reason   string // the refusal's explanation or category
	done     bool
}

func newAssembler(sink llm.Sink) *assembler { return &assembler{sink: sink} }

// Reported says whether an event beyond EventStart reached the sink.
func (a *assembler) Reported() bool { return a.reported }

// emit reports an event to the sink.
func (a *assembler) emit(ev llm.Event) {
	a.reported = true
	a.sink(ev)
}

// Run reads s until message_stop or an error.
func (a *assembler) Run(s *httpcall.Stream) error {
	for !a.done {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return &llm.Error{Provider: providerName, Kind: "stream_cut", Message: "stream ended before message_stop", Retryable: true}
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
	var e streamEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return &llm.Error{Provider: providerName, Kind: "invalid_event", Message: "decoding " + ev.Name + " event: " + err.Error(), Err: err}
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			a.addUsage(e.Message.Usage)
		}
	case "content_block_start":
		return a.blockStart(&e)
	case "content_block_delta":
		return a.blockDelta(&e)
	case "content_block_stop":
		b, err := a.block(e.Index)
		if err != nil {
			return err
		}
		b.stopped = true
		if b.kind == "tool_use" {
			a.emit(llm.Event{Kind: llm.EventToolEnd, ToolID: b.id})
		}
	case "message_delta":
		if d := e.Delta; d != nil {
			if d.StopReason != "" {
				a.stop = d.StopReason
			}
			if sd := d.StopDetails; sd != nil {
				a.reason = sd.Explanation
				if a.reason == "" {
					a.reason = sd.Category
				}
			}
		}
		a.addUsage(e.Usage)
	case "message_stop":
		a.done = true
	case "error":
		return streamError(&e)
	}
	// ping and event types added later need nothing.
	return nil
}

func (a *assembler) blockStart(e *streamEvent) error {
	cb := e.ContentBlock
	if cb == nil {
		return invalidEvent("content_block_start without content_block")
	}
	if e.Index < 0 || e.Index >= maxBlocks {
		return invalidEvent(fmt.Sprintf("content block index %d out of range", e.Index))
	}
	for len(a.blocks) <= e.Index {
		a.blocks = append(a.blocks, nil)
	}
	b := &block{kind: cb.Type}
	a.blocks[e.Index] = b
	// Server tool blocks (server_tool_use and their results) and types
	// added later are kept out of the answer: zot offers no server tools,
	// and their deltas must not pass for a tool call's.
	switch cb.Type {
	case "text":
		a.text(b, llm.EventTextDelta, cb.Text)
	case "thinking":
		a.text(b, llm.EventThinkingDelta, cb.Thinking)
		b.signature.WriteString(cb.Signature)
	case "redacted_thinking":
		b.data = cb.Data
	case "tool_use":
		b.id, b.name, b.input = cb.ID, cb.Name, cb.Input
		a.emit(llm.Event{Kind: llm.EventToolStart, ToolID: b.id, ToolName: b.name})
	}
	return nil
}

func (a *assembler) blockDelta(e *streamEvent) error {
	b, err := a.block(e.Index)
	if err != nil {
		return err
	}
	d := e.Delta
	if d == nil {
		return invalidEvent("content_block_delta without delta")
	}
	// A delta applies only to a block of its own kind; any other (a
	// server tool's input, citations, types added later) is skipped.
	switch {
	case d.Type == "text_delta" && b.kind == "text":
		a.text(b, llm.EventTextDelta, d.Text)
	case d.Type == "thinking_delta" && b.kind == "thinking":
		a.text(b, llm.EventThinkingDelta, d.Thinking)
	case d.Type == "signature_delta" && b.kind == "thinking":
		b.signature.WriteString(d.Signature)
	case d.Type == "input_json_delta" && b.kind == "tool_use":
		if d.PartialJSON != "" {
			b.args = append(b.args, d.PartialJSON...)
			a.emit(llm.Event{Kind: llm.EventToolArgsDelta, Text: d.PartialJSON, ToolID: b.id})
		}
	}
	return nil
}

// text appends s to b and reports it as a delta of kind.
func (a *assembler) text(b *block, kind llm.EventKind, s string) {
	if s == "" {
		return
	}
	b.text.WriteString(s)
	a.emit(llm.Event{Kind: kind, Text: s})
}

// block returns the started block at index i.
func (a *assembler) block(i int) (*block, error) {
	if i < 0 || i >= len(a.blocks) || a.blocks[i] == nil {
		return nil, invalidEvent(fmt.Sprintf("event for content block %d, which was not started", i))
	}
	return a.blocks[i], nil
}

func (a *assembler) addUsage(u *wireUsage) {
	if u == nil {
		return
	}
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.usage.Input, u.InputTokens)
	set(&a.usage.Output, u.OutputTokens)
	set(&a.usage.CacheRead, u.CacheReadInputTokens)
	set(&a.usage.CacheWrite, u.CacheCreationInputTokens)
}

// Response assembles what has arrived. A tool call whose block never
// stopped is left out (its arguments are incomplete), unless the output
// limit ended the message: then it, and a call whose arguments are not
// JSON, is kept as cut, so the model learns why it did not run.
func (a *assembler) Response() *llm.Response {
	cut := a.done && stopReason(a.stop, false) == llm.StopLength
	msg := llm.Message{Role: llm.RoleAssistant}
	hasTools := false
	for _, b := range a.blocks {
		if b == nil {
			continue
		}
		switch b.kind {
		case "text":
			if b.text.Len() > 0 {
				msg.Content = append(msg.Content, &llm.TextBlock{Text: b.text.String()})
			}
		case "thinking":
			msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: providerName, Text: b.text.String(), Signature: b.signature.String()})
		case "redacted_thinking":
			msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: providerName, Redacted: true, Data: b.data})
		case "tool_use":
			if !b.stopped && !cut {
				continue
			}
			raw := b.args
			if len(raw) == 0 {
				raw = b.input
			}
			c := &llm.ToolCallBlock{ID: b.id, Name: b.name}
			c.Args, c.ArgsError = llm.ParseToolArgs(raw)
			if cut && (c.ArgsError != "" || !b.stopped) {
				c.MarkCut("max_tokens")
			}
			msg.Content = append(msg.Content, c)
			hasTools = true
		}
	}
	resp := &llm.Response{Message: msg, Stop: stopReason(a.stop, hasTools), Usage: a.usage, Finish: a.stop}
	switch {
	case resp.Stop == llm.StopRefusal:
		resp.Reason = a.reason
		if resp.Reason == "" {
			resp.Reason = "refusal"
		}
	case resp.Stop == llm.StopLength && hasTools:
		resp.Reason = llm.CutReason
	case a.stop == "model_context_window_exceeded":
		resp.Reason = llm.ContextFullReason
	}
	resp.ContextFull = a.stop == "model_context_window_exceeded"
	return resp
}

// stopReason maps the API's stop_reason: a refusal and the output limit
// win over tool calls (such calls never run), and any other tool call
// means tool_use.
func stopReason(s string, hasTools bool) llm.StopReason {
	switch s {
	case "refusal":
		return llm.StopRefusal
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopLength
	}
	if hasTools || s == "tool_use" {
		return llm.StopToolUse
	}
	// end_turn, stop_sequence, pause_turn and anything new.
	return llm.StopEndTurn
}

// streamError turns an error event into an *llm.Error.
func streamError(e *streamEvent) error {
	le := &llm.Error{Provider: providerName, Kind: "error", Message: "error event without details"}
	if e.Error != nil {
		le.Kind, le.Message = e.Error.Type, e.Error.Message
	}
	switch le.Kind {
	case "overloaded_error", "api_error", "rate_limit_error":
		le.Retryable = true
	}
	return le
}

func invalidEvent(msg string) error {
	return &llm.Error{Provider: providerName, Kind: "invalid_event", Message: msg}
}

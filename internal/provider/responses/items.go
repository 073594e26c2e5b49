package responses

import (
	"fmt"
	"strconv"
	"strings"

	"zot.dev/zot/internal/llm"
)

// item is one output item being assembled.
type item struct {
	kind string // the item type: "message", "reasoning", "function_call", ...
	id   string // the item's id
	text strings.Builder
	// summary is the index of the last reasoning summary part seen, -1
	// before the first.
	summary   int
	encrypted string
	callID    string
	name      string
	args      []byte
	ended     bool // a function call's arguments are complete
}

// itemAdded starts the item at the event's output index.
func (a *assembler) itemAdded(e *streamEvent) error {
	if e.Item == nil {
		return a.invalid("response.output_item.added without item")
	}
	i := e.OutputIndex
	if i == noIndex {
		i = len(a.items)
	}
	if i < 0 || i >= maxItems {
		return a.invalid(fmt.Sprintf("output index %d out of range", i))
	}
	for len(a.items) <= i {
		a.items = append(a.items, nil)
	}
	src := e.Item
	it := &item{kind: src.Type, id: src.ID, summary: -1}
	a.items[i] = it
	if it.kind == "function_call" {
		it.callID, it.name = src.CallID, src.Name
		if it.callID == "" {
			it.callID = src.ID
		}
		if it.callID == "" {
			it.callID = "call_" + strconv.Itoa(a.ncalls)
		}
		a.ncalls++
		a.emit(llm.Event{Kind: llm.EventToolStart, ToolID: it.callID, ToolName: it.name})
		a.args(it, src.Arguments)
	}
	return nil
}

// item returns the started item an event refers to: by output index, or
// by item id when the index is missing or names no item.
func (a *assembler) item(e *streamEvent) (*item, error) {
	if i := e.OutputIndex; i >= 0 && i < len(a.items) && a.items[i] != nil {
		return a.items[i], nil
	}
	if e.ItemID != "" {
		for _, it := range a.items {
			if it != nil && it.id == e.ItemID {
				return it, nil
			}
		}
	}
	return nil, a.invalid(fmt.Sprintf("%s event for an item that was not added", e.Type))
}

// text appends s to it and reports it as a delta of kind.
func (a *assembler) text(it *item, kind llm.EventKind, s string) {
	if s == "" {
		return
	}
	it.text.WriteString(s)
	a.emit(llm.Event{Kind: kind, Text: s})
}

// summaryDelta appends reasoning summary text. Summary parts are
// separated by a blank line, reported like the text.
func (a *assembler) summaryDelta(it *item, index int, s string) {
	if s == "" {
		return
	}
	if index != it.summary {
		if it.summary >= 0 && it.text.Len() > 0 {
			a.text(it, llm.EventThinkingDelta, "\n\n")
		}
		it.summary = index
	}
	a.text(it, llm.EventThinkingDelta, s)
}

// args appends a piece of a function call's arguments.
func (a *assembler) args(it *item, s string) {
	if s == "" || it.kind != "function_call" || it.ended {
		return
	}
	it.args = append(it.args, s...)
	a.emit(llm.Event{Kind: llm.EventToolArgsDelta, Text: s, ToolID: it.callID})
}

// finalArgs applies the complete arguments of a call. They are
// authoritative; when no delta carried them they are reported now.
func (a *assembler) finalArgs(it *item, s string) {
	if it.kind != "function_call" || it.ended {
		return
	}
	if len(it.args) == 0 {
		a.args(it, s)
		return
	}
	if s != "" {
		it.args = append(it.args[:0], s...)
	}
}

// endCall reports the end of a function call's arguments, once.
func (a *assembler) endCall(it *item) {
	if it == nil || it.kind != "function_call" || it.ended {
		return
	}
	it.ended = true
	a.emit(llm.Event{Kind: llm.EventToolEnd, ToolID: it.callID})
}

// itemDone applies the finished item: a reasoning item's encrypted
// content, and whatever text, summary or arguments no delta carried.
func (a *assembler) itemDone(e *streamEvent) error {
	it, err := a.item(e)
	if err != nil {
		return err
	}
	src := e.Item
	if src == nil {
		a.endCall(it)
		return nil
	}
	if src.ID != "" {
		it.id = src.ID
	}
	switch it.kind {
	case "message":
		if it.text.Len() == 0 {
			for _, c := range src.Content {
				a.text(it, llm.EventTextDelta, c.Text+c.Refusal)
			}
		}
	case "reasoning":
		it.encrypted = src.EncryptedContent
		if it.text.Len() == 0 {
			for i, s := range src.Summary {
				a.summaryDelta(it, i, s.Text)
			}
		}
	case "function_call":
		if it.name == "" {
			it.name = src.Name
		}
		a.finalArgs(it, src.Arguments)
		a.endCall(it)
	}
	return nil
}

// response assembles what has arrived. Function calls whose arguments
// never completed are left out.
func (a *assembler) response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	hasTools := false
	for _, it := range a.items {
		if it == nil {
			continue
		}
		switch it.kind {
		case "message":
			if it.text.Len() > 0 {
				msg.Content = append(msg.Content, &llm.TextBlock{Text: it.text.String()})
			}
		case "reasoning":
			if it.text.Len() > 0 || it.encrypted != "" {
				msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: a.provider, Text: it.text.String(), ID: it.id, Data: it.encrypted})
			}
		case "function_call":
			if !it.ended {
				continue
			}
			args, argsErr := llm.ParseToolArgs(it.args)
			msg.Content = append(msg.Content, &llm.ToolCallBlock{ID: it.callID, Name: it.name, Args: args, ArgsError: argsErr})
			hasTools = true
		}
	}
	return &llm.Response{Message: msg, Stop: stopReason(a.incomplete, hasTools), Usage: a.usage}
}

// stopReason maps how the response ended; any function call means
// tool_use.
func stopReason(incomplete string, hasTools bool) llm.StopReason {
	if hasTools {
		return llm.StopToolUse
	}
	if incomplete == "max_output_tokens" {
		return llm.StopLength
	}
	// completed, an incomplete response stopped by the content filter, and
	// anything new.
	return llm.StopEndTurn
}

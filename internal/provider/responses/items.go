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
	// text is a message's text, or a reasoning item's summary.
	text strings.Builder
	// raw is a reasoning item's own reasoning text (reasoning_text
	// parts), which servers running open-weight models stream in place
	// of a summary.
	raw strings.Builder
	// summary and rawPart are the indexes of the last summary part and
	// reasoning_text part seen, -1 before the first.
	summary   int
	rawPart   int
	thought   bool // a thinking delta of this item was reported
	encrypted string
	callID    string
	name      string
	args      []byte
	ended     bool   // a function call's arguments are complete
	phase     string // a message's phase: "commentary" or "final_answer"
	// refusal is a message's refusal text, which is also shown as text.
	refusal strings.Builder
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
	it := &item{kind: src.Type, id: src.ID, summary: -1, rawPart: -1, phase: src.Phase}
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

// refusalDelta appends a piece of a refusal: it is shown like text and is
// the reason the response stops for.
func (a *assembler) refusalDelta(it *item, s string) {
	it.refusal.WriteString(s)
	a.text(it, llm.EventTextDelta, s)
}

// summaryDelta appends reasoning summary text. Summary parts are
// separated by a blank line, reported like the text.
func (a *assembler) summaryDelta(it *item, index int, s string) {
	a.partDelta(it, &it.text, &it.summary, index, s)
}

// rawDelta appends the model's own reasoning text, its parts separated
// like summary parts.
func (a *assembler) rawDelta(it *item, index int, s string) {
	a.partDelta(it, &it.raw, &it.rawPart, index, s)
}

// partDelta appends s, a piece of part index, to b; *last is the index of
// the part b ends with. A new part starts with a blank line, in b when b
// has text and in the reported thinking when the item reported any (a
// server may send both a summary and the raw reasoning).
func (a *assembler) partDelta(it *item, b *strings.Builder, last *int, index int, s string) {
	if s == "" {
		return
	}
	if index != *last {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if it.thought {
			a.emit(llm.Event{Kind: llm.EventThinkingDelta, Text: "\n\n"})
		}
		*last = index
	}
	b.WriteString(s)
	it.thought = true
	a.emit(llm.Event{Kind: llm.EventThinkingDelta, Text: s})
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
		if src.Phase != "" {
			it.phase = src.Phase
		}
		if it.text.Len() == 0 {
			for _, c := range src.Content {
				a.text(it, llm.EventTextDelta, c.Text)
				if c.Refusal != "" {
					a.refusalDelta(it, c.Refusal)
				}
			}
		}
	case "reasoning":
		it.encrypted = src.EncryptedContent
		if it.text.Len() == 0 && it.raw.Len() == 0 {
			for i, s := range src.Summary {
				a.summaryDelta(it, i, s.Text)
			}
			for i, c := range src.Content {
				if c.Type == "reasoning_text" {
					a.rawDelta(it, i, c.Text)
				}
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

// Response assembles what has arrived.
func (a *assembler) Response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	hasTools := false
	var refusal []string
	for _, it := range a.items {
		if it == nil {
			continue
		}
		switch it.kind {
		case "message":
			if it.text.Len() > 0 {
				msg.Content = append(msg.Content, &llm.TextBlock{Text: it.text.String(), Phase: it.phase})
			}
			if it.refusal.Len() > 0 {
				refusal = append(refusal, it.refusal.String())
			}
		case "reasoning":
			// A summary is what the API takes back; the raw reasoning is
			// kept when it is all there is.
			b := &llm.ThinkingBlock{Provider: a.provider, Text: it.text.String(), ID: it.id, Data: it.encrypted}
			if b.Text == "" && it.raw.Len() > 0 {
				b.Text, b.Raw = it.raw.String(), true
			}
			if b.Text != "" || b.Data != "" {
				msg.Content = append(msg.Content, b)
			}
		case "function_call":
			// A call whose arguments never completed is left out, unless
			// the output limit ended the response: then it is kept as cut,
			// so the model learns why it did not run.
			cut := a.incomplete == "max_output_tokens"
			if !it.ended && !cut {
				continue
			}
			c := &llm.ToolCallBlock{ID: it.callID, Name: it.name}
			c.Args, c.ArgsError = llm.ParseToolArgs(it.args)
			if cut && (c.ArgsError != "" || !it.ended) {
				c.MarkCut("max_output_tokens")
			}
			msg.Content = append(msg.Content, c)
			hasTools = true
		}
	}
	resp := &llm.Response{Message: msg, Stop: stopReason(a.incomplete, hasTools), Usage: a.usage, Finish: a.incomplete}
	if resp.Finish == "" && a.done {
		resp.Finish = "completed"
	}
	switch {
	case len(refusal) > 0:
		resp.Stop, resp.Reason = llm.StopRefusal, strings.Join(refusal, "\n")
	case resp.Stop == llm.StopRefusal:
		resp.Reason = a.incomplete
	case resp.Stop == llm.StopLength && hasTools:
		resp.Reason = llm.CutReason
	}
	return resp
}

// stopReason maps how the response ended: an incomplete response stopped
// by the content filter is a refusal, the output limit wins over function
// calls (a call it cut never runs), and any other function call means
// tool_use.
func stopReason(incomplete string, hasTools bool) llm.StopReason {
	switch incomplete {
	case "content_filter":
		return llm.StopRefusal
	case "max_output_tokens":
		return llm.StopLength
	}
	if hasTools {
		return llm.StopToolUse
	}
	// completed and anything new.
	return llm.StopEndTurn
}
